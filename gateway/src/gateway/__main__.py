"""``python -m gateway``: run the gateway alone (embedded Postgres/Redis if no URLs are set)."""

from gateway.settings import Settings
from reach_common.service import run_service

if __name__ == "__main__":
    run_service(Settings(), "gateway.app:create_app")
