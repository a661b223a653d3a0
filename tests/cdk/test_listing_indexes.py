"""The listings' indexes (issue 31) are in the synthesized table as in the local one: ``gsi1`` and
``gsi2`` whole, the filter slots ``gsi3`` to ``gsi5`` holding the keys and ``expires_at`` only."""

from __future__ import annotations

from typing import Any

from cfn import properties_of

from parley.infrastructure.table import FILTER_INDEXES, TABLE


def test_the_template_holds_every_listing_index_with_its_projection(dev: Any) -> None:
    table = properties_of(dev, "AWS::DynamoDB::Table")
    indexes = {index["IndexName"]: index for index in table["GlobalSecondaryIndexes"]}

    assert sorted(indexes) == sorted(index.name for index in TABLE.indexes)
    assert len(indexes) <= 20  # DynamoDB's quota of global secondary indexes per table
    for slot in FILTER_INDEXES:
        assert indexes[slot.name]["Projection"] == {
            "ProjectionType": "INCLUDE",
            "NonKeyAttributes": ["expires_at"],
        }
    assert indexes["gsi1"]["Projection"] == {"ProjectionType": "ALL"}
