# syntax=docker/dockerfile:1
#
# gpu-advisor image: dependencies installed with uv from uv.lock in a builder stage, a slim non-root runtime.
#   docker build -t gpu-advisor .
#   docker run --rm -p 8000:8000 gpu-advisor                      # SQLite file inside the container
#   docker compose up --build                                     # with PostgreSQL and Redis (compose.yaml)

# Both stages must use the same Python: the virtual environment points at the base image's interpreter.
ARG PYTHON_IMAGE=python:3.11-slim

FROM ${PYTHON_IMAGE} AS builder

COPY --from=ghcr.io/astral-sh/uv:0.13.9 /uv /bin/uv

ENV UV_COMPILE_BYTECODE=1 \
    UV_LINK_MODE=copy \
    UV_PYTHON_DOWNLOADS=never \
    UV_PROJECT_ENVIRONMENT=/app/.venv

WORKDIR /app

# Dependencies first: this layer is rebuilt only when the lock file changes.
COPY pyproject.toml uv.lock ./
RUN --mount=type=cache,target=/root/.cache/uv \
    uv sync --locked --no-dev --no-install-project

# Then the project itself (installed in editable mode: the environment refers to the source under /app).
COPY README.md ./
COPY api/ ./api/
COPY domain/ ./domain/
COPY migrations/ ./migrations/
RUN --mount=type=cache,target=/root/.cache/uv \
    uv sync --locked --no-dev \
    && python -m compileall -q api domain migrations


FROM ${PYTHON_IMAGE} AS runtime

RUN groupadd --system --gid 10001 app \
    && useradd --system --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent \
       --shell /usr/sbin/nologin app \
    && mkdir -p /app/data/spool /tmp/gpu-advisor-metrics \
    && chown 10001:10001 /app/data /app/data/spool /tmp/gpu-advisor-metrics

WORKDIR /app

# The code stays owned by root (read-only for the service user); only /app/data is writable. The spool folder
# exists in the image so that a volume mounted there (compose.yaml) starts owned by the service user.
COPY --from=builder /app/.venv /app/.venv
COPY --from=builder /app/pyproject.toml /app/uv.lock /app/README.md ./
COPY --from=builder /app/api ./api
COPY --from=builder /app/domain ./domain
COPY --from=builder /app/migrations ./migrations

# DATABASE_URL: without PostgreSQL (plain `docker run`) the embedded SQLite file lives in the writable data folder;
# compose.yaml points it at PostgreSQL. PROMETHEUS_MULTIPROC_DIR: with several workers each one writes its metrics
# there and /metrics merges them.
ENV PATH="/app/.venv/bin:${PATH}" \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    DATABASE_URL=sqlite+aiosqlite:////app/data/gpu-advisor.db \
    GPU_ADVISOR_PENDING_SPOOL_DIR=/app/data/spool \
    PROMETHEUS_MULTIPROC_DIR=/tmp/gpu-advisor-metrics

USER 10001:10001

EXPOSE 8000

HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/health/live', timeout=3)"]

CMD ["gpu-advisor", "serve", "--host", "0.0.0.0", "--port", "8000", "--workers", "2"]
