/**
 * How long API Gateway keeps the authorizer's answer for one Authorization value (0 to 3,600 s):
 * a key's authorizer runs about once per TTL per stage, and a revoked key's cached Allow lasts as
 * long. Its own file, free of aws-cdk-lib, so `npm run keys` can state it without loading the CDK.
 */
export const AUTHORIZER_CACHE_TTL_SECONDS = 300;
