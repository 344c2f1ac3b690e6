"""OpenAPI import: one tool manifest per operation of an OpenAPI 3.x document.

``document`` reads and bounds the document (bytes, depth, nodes, operations),
checks its ``$ref``s and validates it with ``openapi-spec-validator``;
``convert`` turns each operation into a manifest proposal (``$ref``s resolved
with ``referencing``); ``fetch`` reads a document from a URL under the egress
rules; ``service`` runs a dry run or registers the proposals in one batch.
"""
