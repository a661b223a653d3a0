"""Lambda entry of the API's JWT authorizer (API Gateway TOKEN authorizer): parley.authorizer."""

from parley.authorizer import handle

handler = handle
