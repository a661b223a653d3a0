"""Whose JWTs the API accepts (http-api.md, "Base and auth"): a Cognito user pool of the stack, or an
existing OIDC issuer given as context (``options``). Either way the ``authorizer`` function checks the
tokens (``parley.authorizer``); this construct only gives it the issuer, the audiences, the principal
claim and the JWKS through :attr:`Authentication.environment`.
"""

from __future__ import annotations

from aws_cdk import Duration, Fn
from aws_cdk import aws_cognito as cognito
from constructs import Construct

from parley.authorizer import (
    AUDIENCE_VARIABLE,
    ISSUER_VARIABLE,
    JWKS_URL_VARIABLE,
    PRINCIPAL_CLAIM_VARIABLE,
)
from parley_cdk.nag import accept
from parley_cdk.options import DeploymentOptions
from parley_cdk.settings import StageSettings


class Authentication(Construct):
    """The token issuer: :attr:`user_pool` and :attr:`client` when the stack makes one, else ``None``."""

    def __init__(
        self, scope: Construct, construct_id: str, *, settings: StageSettings, options: DeploymentOptions
    ) -> None:
        super().__init__(scope, construct_id)
        self.user_pool: cognito.UserPool | None = None
        self.client: cognito.UserPoolClient | None = None
        if options.oidc is not None:
            self.issuer = options.oidc.issuer
            audiences = ",".join(options.oidc.audiences)
            jwks_url = options.oidc.jwks_uri
        else:
            self.user_pool, self.client = self._user_pool(settings)
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
