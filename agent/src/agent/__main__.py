"""``python -m agent``: run the agent alone (embedded Postgres/Redis if no URLs are set)."""

import sys

from agent.settings import Settings
from reach_common.llm.errors import LLMConfigError
from reach_common.llm.factory import check_settings
from reach_common.service import run_service

if __name__ == "__main__":
    settings = Settings()
    try:
        check_settings(settings)
    except LLMConfigError as exc:
        sys.exit(f"agent: cannot start: {exc.message}")
    run_service(settings, "agent.app:create_app")
