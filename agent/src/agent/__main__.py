"""``python -m agent``: run the agent alone (embedded Postgres/Redis if no URLs are set)."""

from agent.settings import Settings
from reach_common.service import run_service

if __name__ == "__main__":
    run_service(Settings(), "agent.app:create_app")
