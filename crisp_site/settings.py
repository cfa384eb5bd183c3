"""Settings for Crisp online: every value that differs between machines comes from the environment.

Development (`make run`, `make test`) needs nothing set: SQLite in `var/`, an embedded Redis on a
unix socket in `var/`, a secret key generated once into `var/`. Production sets at least
`DEBUG=0`, `SECRET_KEY`, `ALLOWED_HOSTS`, `DATABASE_URL` and `REDIS_URL`; README.md lists them.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
from django.utils.translation import gettext_lazy as _

from crisp_site import embedded_redis

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("CRISP_VAR_DIR", BASE_DIR / "var"))


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: list[str]) -> list[str]:
    value = os.environ.get(name)
    if not value:
        return default
    return [item.strip() for item in value.split(",") if item.strip()]


# --- Core -----------------------------------------------------------------------------------
# DEBUG defaults on so that `make run` works with nothing set; production must say DEBUG=0, and
# then every setting below that protects users becomes mandatory or strict.
DEBUG = env_bool("DEBUG", True)


def _secret_key() -> str:
    key = os.environ.get("SECRET_KEY")
    if key:
        return key
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off.")
    # Development: one key per checkout, kept in var/ so sessions survive restarts.
    path = VAR_DIR / "secret_key"
    if not path.exists():
        VAR_DIR.mkdir(parents=True, exist_ok=True)
        path.write_text(secrets.token_urlsafe(50))
        path.chmod(0o600)
    return path.read_text().strip()


SECRET_KEY = _secret_key()
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"] if DEBUG else [])
if not DEBUG and not ALLOWED_HOSTS:
    raise ImproperlyConfigured("ALLOWED_HOSTS must be set when DEBUG is off.")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "daphne",  # first: its runserver serves ASGI (HTTP + WebSocket) in development
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI assets served from the package, not a CDN
    "axes",
    "csp",
    "crisp_site",
    "accounts",
    "games",
    "history",  # after games: it depends on games, never the other way round
    "notifications",  # after games: listens to games.signals.your_move (issue 26)
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",  # Content-Security-Policy on every response
    # One body limit, declared or chunked: 413 (JSON on the API) before anything reads it.
    "crisp_site.middleware.BodyLimitMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last, as django-axes asks: it turns a locked-out log-in into its lockout response.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "crisp_site.urls"
ASGI_APPLICATION = "crisp_site.asgi.application"
WSGI_APPLICATION = "crisp_site.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                # The header's "Your move (n)" (issue 26): one COUNT, only when rendered.
                "games.turns.context_processor",
            ],
        },
    },
]

# --- Database -------------------------------------------------------------------------------
# DATABASE_URL (e.g. postgres://user@host:5432/crisp); default a SQLite file in var/.
_sqlite_default = f"sqlite:///{VAR_DIR / 'db.sqlite3'}"
DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL") or _sqlite_default,
        conn_max_age=int(os.environ.get("CONN_MAX_AGE", "0")),
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # SQLite has no SELECT ... FOR UPDATE. IMMEDIATE transactions take the write lock when the
    # transaction starts, which serialises the service layer's read-check-write the same way
    # row locks do on PostgreSQL; WAL lets readers (daphne, Celery) go on meanwhile.
    DATABASES["default"]["OPTIONS"] = {
        "transaction_mode": "IMMEDIATE",
        "timeout": 20,
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
    VAR_DIR.mkdir(parents=True, exist_ok=True)
elif DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    _pg_options = DATABASES["default"].setdefault("OPTIONS", {})
    # A lock wait must never stall a daphne process's database thread for long (see
    # docs/ARCHITECTURE notes in README): give up after a few seconds with a clear error.
    _pg_options["options"] = f"-c lock_timeout={int(os.environ.get('DB_LOCK_TIMEOUT_MS', '5000'))}"
    # A bounded psycopg pool per process instead of one connection per thread: under ASGI every
    # request and every thread-pool call has its own thread, and persistent connections
    # (CONN_MAX_AGE > 0) are never closed there, so a burst of 300 requests opened 100 backends
    # and the rest failed with "too many clients". With the pool a request borrows one of at
    # most DB_POOL_MAX_SIZE connections and returns it at the end; past that it waits (up to
    # DB_POOL_TIMEOUT seconds) instead of failing. Django requires CONN_MAX_AGE=0 with a pool.
    if env_bool("DB_POOL", True):
        if DATABASES["default"]["CONN_MAX_AGE"]:
            raise ImproperlyConfigured(
                "CONN_MAX_AGE must be 0 with the PostgreSQL connection pool (DB_POOL=1); "
                "the pool is what keeps connections open."
            )
        _pg_options["pool"] = {
            "min_size": int(os.environ.get("DB_POOL_MIN_SIZE", "2")),
            "max_size": int(os.environ.get("DB_POOL_MAX_SIZE", "10")),
            "timeout": float(os.environ.get("DB_POOL_TIMEOUT", "20")),
            # Give a connection back to PostgreSQL after 10 idle minutes (min_size stay open).
            "max_idle": 600.0,
        }

# The hot path's statements prepared once per PostgreSQL connection and bound server-side
# (crisp_site.prepared.binding_cursor; bench/RESULTS.md, session 18). Off (0) behind a pooler
# that does not keep one session per client (PgBouncer in transaction mode): a prepared
# statement belongs to its session.
DB_SERVER_BINDING = env_bool("DB_SERVER_BINDING", True)

# Database calls one daphne process runs at once for its sockets (crisp_site/db.py); 0: the
# PostgreSQL pool's max_size (4 without a pool).
DB_THREADS = int(os.environ.get("DB_THREADS", "0"))
# How many of those threads keep a pooled PostgreSQL connection between calls instead of
# borrowing one per call (crisp_site/db.py); -1: half the pool's max_size, so the other half
# serves the process's REST requests. 0: none (every call borrows and gives back, as before).
DB_THREAD_CONNECTIONS = int(os.environ.get("DB_THREAD_CONNECTIONS", "-1"))

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
AUTH_USER_MODEL = "accounts.User"

# --- Redis: Channels layer and Celery broker --------------------------------------------------
# REDIS_URL unset means the embedded server (crisp_site/embedded_redis.py) on a unix socket.
EMBEDDED_REDIS = embedded_redis.environ_url() is None
EMBEDDED_REDIS_SOCKET = embedded_redis.socket_path(VAR_DIR, "redis")
REDIS_URL = embedded_redis.environ_url() or embedded_redis.url_for(EMBEDDED_REDIS_SOCKET)


def celery_url(redis_url: str) -> str:
    """Kombu spells a unix-socket Redis `redis+socket://PATH`; redis-py spells it `unix://PATH`."""
    if redis_url.startswith("unix://"):
        return "redis+socket://" + redis_url.removeprefix("unix://")
    return redis_url


# Which Channels layer carries live frames between processes. bench/live.py measures both side by
# side; "pubsub" (RedisPubSubChannelLayer) fans out about twice as fast here and holds one Redis
# connection per process and loop, so a burst of connecting sockets cannot exhaust a pool.
# "classic" (RedisChannelLayer, queues in Redis with capacity/expiry) stays selectable; its pool
# is a *blocking* one sized by CHANNEL_POOL_MAX (redis-py's default pool raises past 100). Both
# are channels-redis's layers plus `group_send_many` (games/layers.py: a change's frames in one
# round trip).
CHANNEL_LAYER = os.environ.get("CHANNEL_LAYER", "pubsub")
if CHANNEL_LAYER not in {"pubsub", "classic"}:
    raise ImproperlyConfigured("CHANNEL_LAYER must be 'pubsub' or 'classic'.")
CHANNEL_LAYERS = {
    "default": {
        "BACKEND": (
            "games.layers.PubSubChannelLayer"
            if CHANNEL_LAYER == "pubsub"
            else "games.layers.PooledRedisChannelLayer"
        ),
        "CONFIG": {
            "hosts": [{"address": REDIS_URL}],
            "prefix": os.environ.get("CHANNEL_PREFIX", "crisp"),
            **(
                {}
                if CHANNEL_LAYER == "pubsub"
                else {
                    "capacity": 1000,
                    "expiry": 30,
                    "pool_max_connections": int(os.environ.get("CHANNEL_POOL_MAX", "400")),
                    "pool_timeout": 10,
                }
            ),
        },
    }
}

# The cache holds the throttles' counters (crisp_site/throttles.py): in Redis, so that a limit
# holds across every daphne process. Nothing else is cached; losing it costs nothing.
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": REDIS_URL,
        "KEY_PREFIX": os.environ.get("CHANNEL_PREFIX", "crisp"),
        "OPTIONS": {"socket_timeout": 2, "socket_connect_timeout": 2},
    }
}

CELERY_BROKER_URL = celery_url(REDIS_URL)
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Celery's Django fixup would otherwise close the database connection (and a prefork child's
# whole pool) around every task: a new PostgreSQL backend per timer. crisp_site/celery.py hands
# connections back per task instead; the fixup still closes everything every this many tasks.
CELERY_DB_REUSE_MAX = int(os.environ.get("CELERY_DB_REUSE_MAX", "1000"))
# Countdown tasks (a computer player's move after its think time) stay unacknowledged in Redis
# until they run; a task whose worker died is redelivered only after the visibility timeout,
# which must stay well above the longest countdown or it would run twice.
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 3600}
CELERY_TIMEZONE = "UTC"
# Timers (games/timers.py): due instants in a Redis sorted set, popped by a loop in each Celery
# worker process that wakes at the next due instant (or when an earlier one is added), at
# least every MAX_SLEEP_MS, and fires them on TIMER_THREADS threads.
CRISP_TIMER_MAX_SLEEP_MS = float(os.environ.get("CRISP_TIMER_MAX_SLEEP_MS", "1000"))
CRISP_TIMER_THREADS = int(os.environ.get("CRISP_TIMER_THREADS", "4"))
# The periodic sweep enforces every deadline whose timer never fired (worker killed, Redis
# restarted): within SWEEP_SECONDS of its due time. A sweep that could not run in time is dropped
# (expires) rather than piling up behind a dead worker: the next one does the same work.
CRISP_SWEEP_SECONDS = float(os.environ.get("CRISP_SWEEP_SECONDS", "2"))
# A computer player's think time per move, drawn between these two figures (ms): long enough to
# read as a person's, short enough to keep a table moving. Tests that play whole games against
# the computer shorten it (both the web and the worker processes draw it, so set it for both).
CRISP_BOT_THINK_MS = tuple(
    int(ms) for ms in os.environ.get("CRISP_BOT_THINK_MS", "700,2200").split(",")
)
# Tables nobody uses end by themselves (issue 24, item 4; games.services.night, run by the sweep
# once a minute). An untimed or timed game in progress with no player action and no player
# connected for IDLE_GAME_SECONDS is abandoned; an open lobby whose host has not been connected
# and which nobody touched for LOBBY_HOST_AWAY_SECONDS closes, and any lobby untouched for
# LOBBY_IDLE_SECONDS; a rematch lobby that nobody else joined closes after REMATCH_LOBBY_SECONDS.
CRISP_IDLE_GAME_SECONDS = int(os.environ.get("CRISP_IDLE_GAME_SECONDS", "1800"))
CRISP_LOBBY_HOST_AWAY_SECONDS = int(os.environ.get("CRISP_LOBBY_HOST_AWAY_SECONDS", "300"))
CRISP_LOBBY_IDLE_SECONDS = int(os.environ.get("CRISP_LOBBY_IDLE_SECONDS", "3600"))
CRISP_REMATCH_LOBBY_SECONDS = int(os.environ.get("CRISP_REMATCH_LOBBY_SECONDS", "180"))
# A turn-based game's lobby (issue 26) waits for friends who come by over days: it closes only
# untouched for TURN_BASED_LOBBY_IDLE_SECONDS (a week), never for its host being away.
CRISP_TURN_BASED_LOBBY_IDLE_SECONDS = int(
    os.environ.get("CRISP_TURN_BASED_LOBBY_IDLE_SECONDS", str(7 * 86_400))
)
# Guests (issue 24, accounts.services.guests_clean_idle): a guest account idle this many days,
# with no game in the lobby or in progress, is deleted (never played) or anonymised (played:
# its finished games stay whole). Celery beat runs the clean-up every GUEST_CLEAN_SECONDS.
CRISP_GUEST_IDLE_DAYS = int(os.environ.get("CRISP_GUEST_IDLE_DAYS", "7"))
CRISP_GUEST_CLEAN_SECONDS = float(os.environ.get("CRISP_GUEST_CLEAN_SECONDS", "3600"))
CELERY_BEAT_SCHEDULE: dict[str, dict] = {
    "games-sweep": {
        "task": "games.sweep",
        "schedule": CRISP_SWEEP_SECONDS,
        "options": {"expires": max(1.0, CRISP_SWEEP_SECONDS * 2)},
    },
    "accounts-guests-clean": {
        "task": "accounts.guests_clean",
        "schedule": CRISP_GUEST_CLEAN_SECONDS,
        "options": {"expires": CRISP_GUEST_CLEAN_SECONDS},
    },
}

# --- Authentication -----------------------------------------------------------------------
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",  # refuses log-ins while locked out
    "django.contrib.auth.backends.ModelBackend",
]
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "accounts:login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "home"

# The client's address behind reverse proxies (crisp_site/proxies.py): X-Forwarded-For is
# believed only from these networks (comma-separated CIDRs, e.g. "127.0.0.1/32,10.0.0.0/8").
TRUSTED_PROXIES = env_list("TRUSTED_PROXIES", [])
try:
    from crisp_site.proxies import parse_networks as _parse_networks

    _parse_networks(tuple(TRUSTED_PROXIES))
except ValueError as _error:
    raise ImproperlyConfigured(f"TRUSTED_PROXIES: {_error}") from None

# django-axes: 5 failures for one username from one address lock that pair for 15 minutes.
AXES_CLIENT_IP_CALLABLE = "crisp_site.proxies.client_ip"
AXES_FAILURE_LIMIT = int(os.environ.get("AXES_FAILURE_LIMIT", "5"))
AXES_COOLOFF_TIME = float(os.environ.get("AXES_COOLOFF_HOURS", "0.25"))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
# A locked-out person gets the log-in page again with a translated explanation (status 429).
AXES_LOCKOUT_CALLABLE = "accounts.views.lockout_response"

# --- Internationalisation -------------------------------------------------------------------
LANGUAGE_CODE = "en"
LANGUAGES = [("en", _("English")), ("ja", _("Japanese")), ("ru", _("Russian"))]
LOCALE_PATHS = [BASE_DIR / "locale"]
USE_I18N = True
TIME_ZONE = "UTC"
USE_TZ = True

# --- Static files -----------------------------------------------------------------------------
STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(os.environ.get("STATIC_ROOT", BASE_DIR / "staticfiles"))
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "whitenoise.storage.CompressedManifestStaticFilesStorage"
        )
    },
}
# In development WhiteNoise serves straight from the source folders: no collectstatic needed.
WHITENOISE_USE_FINDERS = DEBUG
WHITENOISE_AUTOREFRESH = DEBUG

# --- E-mail ----------------------------------------------------------------------------------
EMAIL_BACKEND = os.environ.get("EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "Crisp online <noreply@localhost>")

# --- Notifications (issue 26: notifications/) ---------------------------------------------------
# The site's address as mails link to it (a mail leaves the site: its links must be absolute).
CRISP_SITE_URL = os.environ.get("CRISP_SITE_URL", "http://localhost:8000")
# The "your move" mail is a digest: sent this long after the move that made it someone's move
# (the moves of those minutes share one mail), and never listing a game again to the same person
# within GAME_INTERVAL.
CRISP_MAIL_DIGEST_DELAY_SECONDS = int(os.environ.get("CRISP_MAIL_DIGEST_DELAY_SECONDS", "300"))
CRISP_MAIL_GAME_INTERVAL_SECONDS = int(os.environ.get("CRISP_MAIL_GAME_INTERVAL_SECONDS", "3600"))
# The paces whose games are told by mail and push: turn-based only (a live game's players are at
# the table, with a clock of seconds).
CRISP_NOTIFY_PACES = tuple(env_list("CRISP_NOTIFY_PACES", ["turn_based"]))
# Web Push: the site's VAPID key pair (`manage.py vapid_keys` makes one) and the contact the push
# services see. Without both keys push is off and the settings page hides its switch.
VAPID_PUBLIC_KEY = os.environ.get("VAPID_PUBLIC_KEY", "")
VAPID_PRIVATE_KEY = os.environ.get("VAPID_PRIVATE_KEY", "")
VAPID_SUBJECT = os.environ.get(
    "VAPID_SUBJECT", "mailto:" + DEFAULT_FROM_EMAIL.split("<")[-1].strip(" >")
)
# How long a push service keeps a push for a browser that is offline.
CRISP_PUSH_TTL_SECONDS = int(os.environ.get("CRISP_PUSH_TTL_SECONDS", "86400"))
# Push endpoints must be https (push services are); plain http only for a local stand-in.
CRISP_PUSH_ALLOW_HTTP = env_bool("CRISP_PUSH_ALLOW_HTTP", False)

# --- REST API ---------------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # Third-party clients: `Authorization: Token <key>` (no CSRF, untouched by django-axes).
        "accounts.authentication.ApiTokenAuthentication",
        # The site's own pages: the log-in session, with CSRF enforced as usual.
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    # DRF's defaults, with JSON nesting bounded (crisp_site/parsers.py): too deep is a 400.
    "DEFAULT_PARSER_CLASSES": [
        "crisp_site.parsers.JSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    # Views name their own limits (throttle_classes); every request presenting an invite code
    # counts against the invite_code limit (crisp_site/throttles.py).
    "DEFAULT_THROTTLE_CLASSES": ["crisp_site.throttles.InviteCodeThrottle"],
    # Every refusal as {"code", "detail"} JSON with a stable code (games/exceptions.py).
    "EXCEPTION_HANDLER": "games.exceptions.api_exception_handler",
}
# Throttles (crisp_site/throttles.py, docs/API.md): "<n>/<second|minute|hour|day>" per scope,
# per user when signed in, else per client address. THROTTLE_RATES="scope=rate,..." overrides.
DEFAULT_THROTTLE_RATES = {
    "signup": "20/hour",  # sign-up attempts from one address
    "guest_create": "10/hour",  # guest accounts made from one address ("Play as guest")
    "password_reset": "10/hour",  # reset requests from one address
    "password_reset_email": "3/hour",  # reset mails to one e-mail address
    "token_create": "20/hour",  # API tokens created by one user (API and page)
    "game_create": "30/hour",  # lobbies opened by one user
    "join": "30/minute",  # joins (by id or invite code) by one user: bounds code guessing
    "invite_code": "60/minute",  # any request presenting ?invite_code=, by one user
    "game_act": "10/second",  # REST actions by one user (the WebSocket has its own limit)
    "anon_read": "300/minute",  # reads by clients with no account (watching), per address
}


def _throttle_rates() -> dict[str, str]:
    rates = dict(DEFAULT_THROTTLE_RATES)
    for item in env_list("THROTTLE_RATES", []):
        scope, _, rate = item.partition("=")
        if scope.strip() not in rates or "/" not in rate:
            raise ImproperlyConfigured(f"THROTTLE_RATES: bad entry {item!r}")
        rates[scope.strip()] = rate.strip()
    return rates


THROTTLE_RATES = _throttle_rates()

SPECTACULAR_SETTINGS = {
    "TITLE": "Crisp online API",
    "DESCRIPTION": "Play Crisp, Cribbage and Triple Crown over HTTP. Every response is "
    "redacted for its receiver.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # Swagger UI's JS/CSS come from drf-spectacular-sidecar's static files (no CDN).
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # One name for the computer players' levels, wherever they appear (a seat, a request).
    "ENUM_NAME_OVERRIDES": {"BotLevelEnum": "games.api.serializers.BOT_LEVELS"},
    # Request bodies are documented as JSON only, the API's format (docs/API.md). The form
    # parsers stay for the site's own pages' requests; a client sending a form where the
    # schema says JSON is outside the contract (an empty form reads as "all defaults").
    "PARSER_WHITELIST": ["crisp_site.parsers.JSONParser"],
    # Statuses every operation can answer (429, 503, 500, …), documented on each (the schema
    # must describe every answer the site gives: tests/games/test_schema_fuzz.py checks it).
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "games.api.schema.document_common_errors",
    ],
}

# --- Security (production) --------------------------------------------------------------------
# Behind a TLS-terminating proxy that sets X-Forwarded-Proto.
if not DEBUG:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = int(os.environ.get("SECURE_HSTS_SECONDS", str(60 * 60 * 24 * 365)))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", True)
SECURE_CONTENT_TYPE_NOSNIFF = True
# The language menu's cookie: never sent cross-site, and only over HTTPS in production.
LANGUAGE_COOKIE_SAMESITE = "Lax"
LANGUAGE_COOKIE_SECURE = not DEBUG

# Content-Security-Policy (django-csp 4): only our own origin's scripts, styles, images, fonts
# and connections (the game WebSocket is same-origin), no inline script or style, no plugins,
# no framing. Behaviours live in static/js (e.g. site.js wires the language menu); Swagger UI is
# served self-hosted by drf-spectacular-sidecar. Its images include data: URIs (icons in CSS).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    }
}
X_FRAME_OPTIONS = "DENY"

# --- Logging ---------------------------------------------------------------------------------
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    # A client's malformed request is not a server fault: Django logs these at ERROR with a
    # traceback; crisp_site/logs.py makes each one WARNING line (the 400 is unchanged).
    # A body Django cannot parse (multipart without a boundary) is a 400 that `django.request`
    # logs with the parser's traceback: the line stays, the traceback goes.
    "filters": {
        "client_error": {"()": "crisp_site.logs.ClientErrorFilter"},
        "client_request": {"()": "crisp_site.logs.ClientRequestFilter"},
    },
    "loggers": {
        "daphne": {"level": "WARNING"},
        "django.request": {"filters": ["client_request"]},
        **{
            f"django.security.{name}": {"filters": ["client_error"]}
            for name in ("RequestDataTooBig", "TooManyFieldsSent", "TooManyFilesSent")
        },
    },
}
