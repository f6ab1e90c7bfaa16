"""The schema class of the API: every operation documents the errors it can answer.

Whatever a view declares, an operation also lists (in the shapes of dashboards/api/errors.py)
400 when it takes parameters or a body, 404 (no such object, no such page, or a path that
matches no route), 401/403 when it writes, 413 on uploads, and 429 (throttles) always.
"""

from __future__ import annotations

from drf_spectacular.openapi import AutoSchema

from dashboards.api import errors

# Text parameters refuse a NUL (PostgreSQL cannot store or compare one): say so.
NO_NUL = "^[^\\x00]*$"
TEXT = {"type": "string", "maxLength": 200, "pattern": NO_NUL}


class ErrorDocumentingSchema(AutoSchema):
    def get_auth(self):
        """Reads open to anyone under a permission that says so (``open_for_reading``)."""
        auths = super().get_auth()
        safe = self.method in ("GET", "HEAD", "OPTIONS")
        perms = self.view.get_permissions()
        if safe and {} not in auths and any(getattr(p, "open_for_reading", False) for p in perms):
            auths.append({})
        return auths

    def _get_parameters(self):
        parameters = super()._get_parameters()
        for parameter in parameters:
            schema = parameter.get("schema", {})
            if schema.get("type") == "string" and "enum" not in schema:
                schema.setdefault("pattern", NO_NUL)
        return parameters

    def _get_response_bodies(self, direction="response"):
        responses = super()._get_response_bodies(direction)
        if direction != "response":
            return responses
        writes = self.method not in ("GET", "HEAD", "OPTIONS")
        extra = {"404": errors.NOT_FOUND, "429": errors.THROTTLED}
        if writes or self._get_filter_parameters() or self.get_override_parameters():
            extra["400"] = errors.BAD_REQUEST
        if self._is_list_view() or self.path_regex.count("(?P<"):
            extra["400"] = errors.BAD_REQUEST
        if writes:
            extra["401"] = errors.UNAUTHORIZED
            extra["403"] = errors.FORBIDDEN
            extra["400"] = errors.BAD_REQUEST
        if writes and self.method in ("POST", "PUT", "PATCH"):
            extra["415"] = errors.UNSUPPORTED
        if "/uploads" in self.path and writes:
            extra["413"] = errors.TOO_LARGE
        for code, response in extra.items():
            if code not in responses:
                responses[code] = self._get_response_for_code(response, code, None, direction)
        return responses
