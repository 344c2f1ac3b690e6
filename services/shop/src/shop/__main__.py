"""``python -m shop``: run the shop alone (embedded Postgres/Redis if no URLs are set)."""

from reach_common.service import run_service
from shop.settings import Settings

if __name__ == "__main__":
    run_service(Settings(), "shop.app:create_app")
