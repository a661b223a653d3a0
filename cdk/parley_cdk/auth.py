"""Whose JWTs the API accepts (http-api.md, "Base and auth"): a Cognito user pool of the stack, or an
existing OIDC issuer given as context (``options``). Either way the ``authorizer`` function checks the
tokens (``parley.authorizer``); this construct only gives it the issuer, the audiences, the principal
claim and the JWKS through :attr:`Authentication.environment`.

The web inbox (http-api.md, "The web inbox") signs people in through the pool's hosted sign-in: the pool
gets a domain (:attr:`Authentication.domain`, prefixed ``parley-<stage>-<account>``), and
:meth:`Authentication.serve_inbox` — called once the API exists, since the sign-in returns to the page's
URL — gives the app client the authorization code grant (with PKCE: the client has no secret) for the
scopes ``openid email profile``, the page's URL as its callback and sign-out URL, and gives the api
function the domain and the client id (``PARLEY_INBOX_COGNITO_DOMAIN``, ``PARLEY_INBOX_CLIENT_ID``). Until
then the client takes no OAuth flow at all. With an existing OIDC issuer there is no hosted sign-in: the
page asks for a bearer token.
"""

from __future__ import annotations

from typing import Final, cast

from aws_cdk import Aws, Duration, Fn, Stack
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_cognito as cognito
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from parley.authorizer import (
    AUDIENCE_VARIABLE,
    ISSUER_VARIABLE,
    JWKS_URL_VARIABLE,
    PRINCIPAL_CLAIM_VARIABLE,
)
from parley.inbox import CLIENT_ID_VARIABLE, COGNITO_DOMAIN_VARIABLE
from parley_cdk.nag import accept
from parley_cdk.options import DeploymentOptions
from parley_cdk.settings import StageSettings

#: The page's path below the API's stage (``parley.inbox.routes.INBOX_PATH``).
INBOX_PATH: Final = "/inbox"
#: What the inbox asks the hosted sign-in for: an ID token with the person's name and email.
INBOX_SCOPES: Final = ("openid", "email", "profile")


def inbox_url(rest_api: apigw.IRestApi, stage_name: str) -> str:
    """The inbox's URL on the API's own domain,
    ``https://<api id>.execute-api.<region>.<url suffix>/<stage>/inbox``.

    Built from the API's id and the stage's name as written, not from ``rest_api.url_for_path``: that names
    the deployment stage's resource, which depends on the api function, whose environment names the app
    client — the client's callback URLs would close a circle.
    """
    stack = Stack.of(rest_api)
    return Fn.join(
        "",
        [
            "https://",
            rest_api.rest_api_id,
            f".execute-api.{stack.region}.{stack.url_suffix}/{stage_name}{INBOX_PATH}",
        ],
    )


class Authentication(Construct):
    """The token issuer: :attr:`user_pool`, :attr:`client` and its hosted sign-in's :attr:`domain` when the
    stack makes one, else ``None``."""

    def __init__(
        self, scope: Construct, construct_id: str, *, settings: StageSettings, options: DeploymentOptions
    ) -> None:
        super().__init__(scope, construct_id)
        self.settings = settings
        self.user_pool: cognito.UserPool | None = None
        self.client: cognito.UserPoolClient | None = None
        self.domain: cognito.UserPoolDomain | None = None
        if options.oidc is not None:
            self.issuer = options.oidc.issuer
            audiences = ",".join(options.oidc.audiences)
            jwks_url = options.oidc.jwks_uri
        else:
            self.user_pool, self.client = self._user_pool(settings)
            self.domain = self._sign_in_domain(settings, self.user_pool)
            # https://cognito-idp.<region>.amazonaws.com/<pool id>: the iss of the pool's tokens.
            self.issuer = self.user_pool.user_pool_provider_url
            audiences = self.client.user_pool_client_id
            jwks_url = Fn.join("", [self.issuer, "/.well-known/jwks.json"])
        #: The authorizer's settings, in every function's environment (none of them is a secret).
        self.environment = {
            ISSUER_VARIABLE: self.issuer,
            AUDIENCE_VARIABLE: audiences,
            PRINCIPAL_CLAIM_VARIABLE: options.principal_claim,
            **({JWKS_URL_VARIABLE: jwks_url} if jwks_url else {}),
        }

    def _user_pool(self, settings: StageSettings) -> tuple[cognito.UserPool, cognito.UserPoolClient]:
        pool = cognito.UserPool(
            self,
            "Users",
            user_pool_name=settings.resource_name("users"),
            # The operator creates the users: a sign-up anyone can make would mint valid tokens.
            self_sign_up_enabled=False,
            sign_in_aliases=cognito.SignInAliases(username=True, email=True),
            password_policy=cognito.PasswordPolicy(
                min_length=12,
                require_lowercase=True,
                require_uppercase=True,
                require_digits=True,
                require_symbols=True,
                temp_password_validity=Duration.days(3),
            ),
            mfa=cognito.Mfa.REQUIRED if settings.retain_data else cognito.Mfa.OPTIONAL,
            mfa_second_factor=cognito.MfaSecondFactor(otp=True, sms=False),
            account_recovery=cognito.AccountRecovery.EMAIL_ONLY,
            feature_plan=cognito.FeaturePlan.ESSENTIALS,
            deletion_protection=settings.retain_data,
            removal_policy=settings.removal_policy,
        )
        client = pool.add_client(
            "Client",
            user_pool_client_name=settings.resource_name("api"),
            # SRP for applications; the password flow lets a person get a token with the AWS CLI
            # (docs/deploy.md), over TLS, and still asks for the MFA code where MFA is required.
            auth_flows=cognito.AuthFlow(user_srp=True, user_password=True),
            generate_secret=False,
            prevent_user_existence_errors=True,
            enable_token_revocation=True,
            access_token_validity=Duration.hours(1),
            id_token_validity=Duration.hours(1),
            refresh_token_validity=Duration.days(30),
            # No OAuth flow until the inbox is served (serve_inbox): CDK's default would allow the
            # implicit grant to https://example.com.
            disable_o_auth=True,
            supported_identity_providers=[cognito.UserPoolClientIdentityProvider.COGNITO],
        )
        accept(
            pool,
            "AwsSolutions-COG8",
            "Threat protection (advanced security) needs the Plus feature plan, billed per monthly active "
            "user; the pool has no self sign-up, strong passwords, MFA in prod, and one-hour tokens.",
        )
        if not settings.retain_data:
            accept(
                pool,
                "AwsSolutions-COG2",
                "The dev stage's users are test accounts signed in from scripts: MFA is optional there "
                "(TOTP can be turned on per user) and required in prod.",
            )
        return pool, client

    def _sign_in_domain(self, settings: StageSettings, pool: cognito.UserPool) -> cognito.UserPoolDomain:
        """The hosted sign-in's domain, ``https://parley-<stage>-<account>.auth.<region>.amazoncognito.com``:
        a prefix is unique per region across every account, so the stage's resource name alone could be
        taken by another deployment; with the account's id it is this stage's."""
        return pool.add_domain(
            "SignIn",
            cognito_domain=cognito.CognitoDomainOptions(domain_prefix=settings.resource_name(Aws.ACCOUNT_ID)),
        )

    def serve_inbox(self, function: lambda_.Function, rest_api: apigw.IRestApi) -> None:
        """Let the web inbox on ``rest_api`` (its stage named as the stage's settings) sign people in: the
        app client takes the authorization code grant (PKCE, no secret) with the inbox's URL as its callback
        and sign-out URL, and ``function`` (the api function) learns the domain and the client id. Nothing
        to do with an existing OIDC issuer: the page then asks for a bearer token."""
        if self.client is None or self.domain is None:
            return
        url = inbox_url(rest_api, self.settings.name)
        client = cast(cognito.CfnUserPoolClient, self.client.node.default_child)
        client.allowed_o_auth_flows_user_pool_client = True
        client.allowed_o_auth_flows = ["code"]
        client.allowed_o_auth_scopes = list(INBOX_SCOPES)
        client.callback_ur_ls = [url]
        client.logout_ur_ls = [url]
        client.supported_identity_providers = ["COGNITO"]
        function.add_environment(COGNITO_DOMAIN_VARIABLE, self.domain.base_url())
        function.add_environment(CLIENT_ID_VARIABLE, self.client.user_pool_client_id)
