"""GET /api/compare/?base=<run ids>&new=<run ids>: the compare page's rows as JSON, in its
order (the headline metric first). The sides may be builds of a set-up by name instead:
``?setup=VolanoMark/P8/UP&base_build=2.5.25&new_build=2.5.25+pri_preempt``."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from dashboards.page_cache.kept import kept_data
from dashboards.page_data.compare import compare_data, compare_selection
from dashboards.pure.selection import BadParam

RUN_IDS = {"type": "string", "pattern": r"^[0-9]{1,18}(,[0-9]{1,18}){0,49}$"}
TEXT = {"type": "string", "maxLength": 200}
COMPARE_PARAMS = [
    OpenApiParameter(
        "base", RUN_IDS, description="baseline run ids, comma-separated: 12,13 (or base_build)"
    ),
    OpenApiParameter(
        "new", RUN_IDS, description="candidate run ids, comma-separated: 15,16 (or new_build)"
    ),
    OpenApiParameter(
        "setup",
        TEXT,
        description="the set-up of base_build and new_build: its id, or workload/hardware/mode "
        "such as VolanoMark/P8/UP, then /rooms=10 to pick among its set-ups",
    ),
    OpenApiParameter(
        "base_build", TEXT, description="every run of this build in the set-up: 2.5.25"
    ),
    OpenApiParameter(
        "new_build", TEXT, description="every run of this build in the set-up: 2.5.25+pri_preempt"
    ),
]


class CompareView(APIView):
    @extend_schema(
        parameters=COMPARE_PARAMS,
        responses={200: OpenApiTypes.OBJECT, 400: OpenApiTypes.OBJECT},
        summary="Baseline against candidate runs, per metric",
        description=(
            "One row per metric: each side's mean, sd and n (warm-up trials left out, runs of a "
            "side pooled), % change, Welch's two-sided p-value when both sides have at least "
            "two values (else confidence 'single value'), `better` in the metric's own "
            "direction (null when it has none), and `more_runs_needed` below three values. "
            "`significant` is the regression detector's rule (detector.policy.judge, with the "
            "series' noise when the runs are of one series); `reason` says why it is or is "
            "not, and `alert_note` names the alert on these runs or why there is none. "
            "When each side is one run whose value a report gave as a mean with its spread "
            "(a kernel test robot mail, an mmtests table), `from_stated_spread` is true: sd "
            "and n are the report's, and the test is Welch's from those summaries, or none "
            "when the report states no number of runs."
        ),
    )
    def get(self, request: Request) -> Response:
        try:
            base, new = compare_selection(request.query_params)
            if not base:
                raise BadParam("base", "give the baseline run ids, e.g. base=12,13")
            rows = kept_data(request, "api-compare", lambda: _rows(base, new))
        except BadParam as error:
            if error.message.startswith("no run"):  # ids of runs that do not exist
                return Response({"detail": str(error)}, status=404)
            return Response({"error": str(error), "param": error.name}, status=400)
        return Response({"base": base, "new": new, "rows": rows})


def _rows(base: list[int], new: list[int]) -> list[dict]:
    lines, _ = compare_data(base, new)
    return [line.as_json() for line in lines]
