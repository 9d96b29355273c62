# mcp-sonde: slim, non-root image running the HTTP API, in two stages.
# builder: the locked dependencies (every file checked against requirements.lock's hashes, wheels
# only, so nothing is compiled) and then the project itself, without dependencies, into /opt/venv.
# runtime: the same base image with that venv alone: no compiler, no build tools, no sources.

FROM python:3.11-slim AS builder
ENV PYTHONDONTWRITEBYTECODE=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
RUN python -m venv /opt/venv
WORKDIR /src
COPY requirements.lock ./
RUN /opt/venv/bin/pip install --require-hashes --only-binary :all: -r requirements.lock
COPY pyproject.toml README.md LICENSE ./
COPY app ./app
COPY badges ./badges
RUN /opt/venv/bin/pip install --no-deps .

FROM python:3.11-slim AS runtime
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PATH=/opt/venv/bin:$PATH \
    MCP_SONDE_HOST=0.0.0.0 MCP_SONDE_PORT=8000 MCP_SONDE_DATA_DIR=/var/lib/mcp-sonde
# cairosvg draws PNG badges through the system's cairo; fonts-dejavu-core holds the face it uses.
RUN apt-get update && apt-get install -y --no-install-recommends libcairo2 fonts-dejavu-core \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --no-create-home sonde \
    && install -d -o sonde -g sonde -m 0700 /var/lib/mcp-sonde
COPY --from=builder /opt/venv /opt/venv
# The key document and a generated signing key (docs/attestations.md): keep them across restarts.
VOLUME ["/var/lib/mcp-sonde"]
WORKDIR /srv/mcp-sonde
USER sonde
EXPOSE 8000
# Healthy once /readyz answers 200 (ready or degraded); 503 while it starts. A start takes about
# 2 s on a quiet machine, longer under load or with a slow database: the start period allows 60.
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 \
  CMD ["python", "-c", "import os, sys, urllib.request; port = os.environ.get('MCP_SONDE_PORT', '8000'); sys.exit(0 if urllib.request.urlopen(f'http://127.0.0.1:{port}/readyz', timeout=2).status == 200 else 1)"]
ENTRYPOINT ["mcp-sonde"]
CMD ["serve"]
