"""GET /api/references/: the reference builds (per hardware or setup) and the alerts held
because their reference moved with them. Reference builds are set in the manifest
(``reference = {kernel, patches}``) or the admin."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from perfdb.models import ReferenceBuild, ReferenceHold


class ReferenceListView(APIView):
    @extend_schema(
        responses={200: OpenApiTypes.OBJECT},
        summary="Reference builds and the alerts held because their reference moved",
    )
    def get(self, request: Request) -> Response:
        refs = ReferenceBuild.objects.select_related("hardware", "setup", "kernel", "patch_set")
        holds = ReferenceHold.objects.select_related("alert").order_by("-created_at")[:200]
        return Response(
            {
                "references": [
                    {
                        "id": r.pk,
                        "hardware": r.hardware.name if r.hardware else None,
                        "setup": r.setup_id,
                        "kernel": r.kernel.version,
                        "patches": [p for p in r.patch_set.name.split("+") if p],
                    }
                    for r in refs.order_by("id")
                ],
                "held_alerts": [
                    {
                        "alert": h.alert_id,
                        "status": h.alert.status,
                        "held": h.alert.status == "untriaged",
                        "reference": h.build,
                        "shift_pct": h.shift_pct,
                        "p_value": h.p_value,
                        "reason": h.reason,
                        "page": request.build_absolute_uri(f"/alerts/{h.alert_id}/"),
                    }
                    for h in holds
                ],
            }
        )
