"""The test override: a separate Redis database and media folder, fast password hashing."""

import os
import tempfile

os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/15")

from config.settings import *  # noqa: E402,F403

MEDIA_ROOT = Path(os.environ.get("MEDIA_ROOT", tempfile.mkdtemp(prefix="perfdb-media-")))  # noqa: F405
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
# An existing (empty) static root; files are served by the finders as in development.
STATIC_ROOT = Path(tempfile.mkdtemp(prefix="perfdb-static-"))  # noqa: F405
WHITENOISE_USE_FINDERS = True
# Page data caches (perfdb/cache/) live in this process only, cleared before each test
# (tests/conftest.py): a value cached by one test can never be served to another.
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
        "KEY_PREFIX": f"perfdb-{CACHE_VERSION}",  # noqa: F405
    }
}
# Throttles and the login lockout have their own tests (tests/config/test_security.py), which
# turn them on; elsewhere a test's many requests must not be throttled. django-axes needs the
# request in authenticate(), which the test client's login() does not pass.
REST_FRAMEWORK = {  # noqa: F405
    **REST_FRAMEWORK,  # noqa: F405
    "DEFAULT_THROTTLE_RATES": {"anon": "100000/min", "user": "100000/min"},
}
AXES_ENABLED = False
# No warm-up task after each test's uploads (tests/dashboards/page_cache/test_warm.py runs
# it itself).
PAGE_CACHE_WARM = False
