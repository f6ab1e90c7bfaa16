"""An upload handler that stops reading a file once it passes the bundle size limit.

``config.middleware.BodySizeLimitMiddleware`` refuses a body whose Content-Length is too
large before reading it; this handler counts the bytes actually received, so a file can never
grow past ``BUNDLE_MAX_BYTES`` on disk whatever the request declared. It runs before Django's
own handlers (settings.FILE_UPLOAD_HANDLERS); on overflow it raises ``BundleTooLarge``, the
rest of the body is never read, and the answer is a 413 (DRF renders it for the API,
``config.middleware.BodySizeLimitMiddleware`` for pages).
"""

from __future__ import annotations

from django.conf import settings
from django.core.files.uploadhandler import FileUploadHandler
from rest_framework import status
from rest_framework.exceptions import APIException


class BundleTooLarge(APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_code = "too_large"

    def __init__(self) -> None:
        super().__init__(f"the bundle is larger than {settings.BUNDLE_MAX_BYTES} bytes")


class BundleSizeLimitHandler(FileUploadHandler):
    def __init__(self, request=None):
        super().__init__(request)
        self.received = 0

    def new_file(self, *args, **kwargs):
        super().new_file(*args, **kwargs)
        self.received = 0

    def receive_data_chunk(self, raw_data, start):
        self.received += len(raw_data)
        if self.received > int(settings.BUNDLE_MAX_BYTES):
            raise BundleTooLarge()
        return raw_data  # handed on to the next handler

    def file_complete(self, file_size):
        return None
