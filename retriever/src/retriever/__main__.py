"""``python -m retriever``: run the retriever alone (embedded Postgres/Redis if no URLs are set)."""

from reach_common.service import run_service
from retriever.settings import Settings

if __name__ == "__main__":
    run_service(Settings(), "retriever.app:create_app")
