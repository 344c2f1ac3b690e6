"""``python -m retriever [serve | ingest PATH...]``: the service (default) or a bulk ingest."""

from retriever.cli import app

if __name__ == "__main__":
    app(prog_name="python -m retriever")
