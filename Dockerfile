# mcp-sonde: slim, non-root image running the HTTP API.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 \
    MCP_SONDE_HOST=0.0.0.0 MCP_SONDE_PORT=8000
RUN apt-get update && apt-get install -y --no-install-recommends libcairo2 fonts-dejavu-core \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /srv/mcp-sonde
COPY pyproject.toml README.md ./
COPY app ./app
COPY badges ./badges
RUN pip install . && useradd --system --uid 10001 --no-create-home sonde
USER sonde
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=3s --start-period=10s --retries=3 \
  CMD ["python", "-c", "import os, sys, urllib.request; port = os.environ.get('MCP_SONDE_PORT', '8000'); sys.exit(0 if urllib.request.urlopen(f'http://127.0.0.1:{port}/healthz', timeout=2).status == 200 else 1)"]
ENTRYPOINT ["mcp-sonde"]
CMD ["serve"]
