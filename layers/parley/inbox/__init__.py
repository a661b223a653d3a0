"""The web inbox (``http-api.md``, "The web inbox"): one static page where people answer what waits for them,
and, in its Connections view (``#connections``; issue 32), see and manage the MCP servers added to their orgs.

The page (``index.html``), its script (``inbox.js``) and style (``inbox.css``) are plain files of this
package, served as they are by :mod:`parley.inbox.routes` — no build step, no third-party origin. The
Markdown of messages goes through markdown-it (``markdown-it.min.js``, with ``markdown-it.LICENSE`` beside
it), vendored unchanged from the npm package: version :data:`MARKDOWN_IT_VERSION`, the file
``dist/browser/markdown-it.umd.min.js`` of its tarball (markdown-it 15 moved the old
``dist/markdown-it.min.js`` there), whose SHA-256 is :data:`MARKDOWN_IT_SHA256`. To update it::

    npm pack markdown-it@<version>
    tar xzf markdown-it-<version>.tgz package/dist/browser/markdown-it.umd.min.js package/LICENSE
    cp package/dist/browser/markdown-it.umd.min.js layers/parley/inbox/markdown-it.min.js
    cp package/LICENSE layers/parley/inbox/markdown-it.LICENSE

and change both constants (a unit test checks the file against them).

The page's settings come from the api function's environment (:mod:`parley.inbox.routes`):
``PARLEY_INBOX_COGNITO_DOMAIN`` and ``PARLEY_INBOX_CLIENT_ID`` turn on the Cognito hosted sign-in;
without them the page asks for a bearer token.
"""

from typing import Final

#: The vendored markdown-it's version, and the SHA-256 of ``markdown-it.min.js``.
MARKDOWN_IT_VERSION: Final = "15.0.3"
MARKDOWN_IT_SHA256: Final = "391f2aa638e75e6c7859d0a5c5650ef0956722a45998f17e05b83bc655778e1e"

#: The api function's environment: the Cognito domain of the hosted sign-in (``https://<prefix>.auth.
#: <region>.amazoncognito.com``) and the app client the page signs in with (``parley_cdk.auth``).
COGNITO_DOMAIN_VARIABLE: Final = "PARLEY_INBOX_COGNITO_DOMAIN"
CLIENT_ID_VARIABLE: Final = "PARLEY_INBOX_CLIENT_ID"
