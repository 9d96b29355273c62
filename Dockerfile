# mcp-sonde: slim, non-root image.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /srv/mcp-sonde
COPY pyproject.toml README.md ./
COPY app ./app
COPY badges ./badges
COPY openapi.yaml ./
RUN pip install . && useradd --system --uid 10001 --no-create-home sonde
USER sonde

ENTRYPOINT ["mcp-sonde"]
CMD ["--help"]
