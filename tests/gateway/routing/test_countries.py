"""Countries a request names, filled as the parameter's schema takes them."""

from __future__ import annotations

import pytest

from gateway.routing.countries import country_value, mentioned, takes_a_country
from gateway.routing.extract import ArgumentExtractor

VISA = {
    "type": "object",
    "properties": {
        "nationality": {"type": "string", "pattern": "^[A-Z]{2}$", "description": "护照签发国家"},
        "destination": {
            "type": "string",
            "pattern": "^[A-Z]{3}$",
            "description": "Destination country, ISO alpha-3",
        },
    },
    "required": ["nationality", "destination"],
}


@pytest.mark.parametrize(
    ("query", "nationality", "destination"),
    [
        ("Do I need a visa for Brazil? I have a UK passport", "GB", "BRA"),
        ("Indian passport holder transiting through Germany", "IN", "DEU"),
        ("visa rules for Canadians going to Vietnam for business?", "CA", "VNM"),
        ("持美国护照去中国探亲，免签能待几天？", "US", "CHN"),
        ("去新加坡留学，中国籍，签证要求是啥", "CN", "SGP"),
        ("中国护照去韩国转机", "CN", "KOR"),
    ],
)
def test_a_nationality_is_the_held_country_and_a_destination_the_other(
    query: str, nationality: str, destination: str
) -> None:
    arguments = ArgumentExtractor().extract(query, VISA).arguments
    assert arguments == {"nationality": nationality, "destination": destination}


def test_a_nationality_is_never_a_place_only_visited() -> None:
    result = ArgumentExtractor().extract("what are the entry requirements for kenya", VISA)
    assert result.arguments == {"destination": "KEN"}
    assert result.missing == ["nationality"]


def test_a_free_text_country_is_taken_as_written_and_us_is_a_pronoun() -> None:
    spec = {"type": "string", "description": "Country or region of travel, e.g. Japan"}
    assert country_value("15 day pass for Thailand", "destination", spec) == "Thailand"
    assert country_value("去新西兰玩一周", "destination", spec) == "新西兰"
    assert country_value("roaming pass USA please", "destination", spec) == "USA"
    assert country_value("can you tell us the price", "destination", spec) is None
    assert country_value("roaming pass for the US next week", "destination", spec) == "US"
    assert country_value("PLEASE HELP US WITH ROAMING", "destination", spec) is None  # shouting


def test_an_enum_of_codes_takes_the_code_it_lists() -> None:
    spec = {"type": "string", "enum": ["DE", "FR", "GB"]}
    assert country_value("ship it to Germany", "country", spec) == "DE"
    assert country_value("ship it to Japan", "country", spec) is None


def test_only_a_country_parameter_reads_countries() -> None:
    assert takes_a_country("country_code", {})
    assert takes_a_country("to", {"description": "目的地国家"})
    assert not takes_a_country("destination", {"description": "Arrival airport IATA code"})
    assert [m.alpha_2 for m in mentioned("Nigerians in Niger")] == ["NG", "NE"]
