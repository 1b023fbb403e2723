/** Generated from openapi.json by `npm run openapi` (openapi-typescript). Do not edit. */
export interface paths {
    "/pets": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List all animals
         * @description A page of pets, optionally of one status. A page holds exactly `limit` pets whenever that many remain; while more remain, `Link: rel="next"` gives the next page (same `limit` and `status`, an opaque cursor). With `status` pets come in ascending `id` order; without it in the table's own, stable order.
         */
        get: operations["listPets"];
        put?: never;
        /**
         * Add an animal
         * @description Stores a new pet under a fresh id. The body is at most 16 KiB of `application/json`. With an `Idempotency-Key`, a retry (same key, same body, within 24 hours) answers the same pet and creates nothing. A read key is refused 403 `FORBIDDEN`; a write key creates at most its daily number of pets per UTC day (set when the key is issued), past which it is answered 429 `TOO_MANY_REQUESTS` with `Retry-After` until 00:00 UTC (a retry that replays a pet is not counted).
         */
        post: operations["createPet"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/pets/{petId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get an animal (deprecated)
         * @deprecated
         * @description One pet by id. Deprecated: use `GET /v1/pets?status=` instead.
         *
         *     Deprecated since 2026-01-01T00:00:00Z; from its sunset, 2030-12-05T00:00:00Z, it answers 410 `GONE`. Successor: `GET /v1/pets`.
         */
        get: operations["getPet"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        /** @enum {string} */
        PetStatus: "available" | "pending" | "sold";
        /** @description A pet to add. Unknown fields, `id` included, are refused. */
        NewPet: {
            /** @description Stored exactly as sent. No control character (U+0000-U+001F, U+007F-U+009F) or U+FFFD anywhere, and no whitespace at either end (ECMA-262's `\s`), as `pattern` states; and no lone surrogate (a `\uD800`-`\uDFFF` escape that is not half of a pair; RFC 7493), which a pattern cannot state in every engine: 400 as well. */
            name: string;
            /** Format: int64 */
            categoryId: number;
            status?: components["schemas"]["PetStatus"];
        };
        /** @description A pet as stored. Without `status` when it was created without one. */
        Pet: {
            /** Format: int64 */
            id: number;
            /** @description Stored exactly as sent. No control character (U+0000-U+001F, U+007F-U+009F) or U+FFFD anywhere, and no whitespace at either end (ECMA-262's `\s`), as `pattern` states; and no lone surrogate (a `\uD800`-`\uDFFF` escape that is not half of a pair; RFC 7493), which a pattern cannot state in every engine: 400 as well. */
            name: string;
            /** Format: int64 */
            categoryId: number;
            status?: components["schemas"]["PetStatus"];
        };
        /** @description Every error answer. `status` repeats the HTTP status. */
        Error: {
            /** @enum {string} */
            code: "VALIDATION_FAILED" | "UNAUTHORIZED" | "FORBIDDEN" | "NOT_FOUND" | "METHOD_NOT_ALLOWED" | "REQUEST_TIMEOUT" | "IDEMPOTENCY_IN_PROGRESS" | "GONE" | "PAYLOAD_TOO_LARGE" | "UNSUPPORTED_MEDIA_TYPE" | "EXPECTATION_FAILED" | "IDEMPOTENCY_KEY_REUSED" | "TOO_MANY_REQUESTS" | "HEADERS_TOO_LARGE" | "INTERNAL" | "NOT_IMPLEMENTED" | "BAD_GATEWAY" | "SERVICE_UNAVAILABLE" | "GATEWAY_TIMEOUT";
            /** @description For people; never a stack trace. */
            message: string;
            status: number;
            /** @description On 5xx answers: the request id to quote (as in `X-Request-Id`). */
            requestId?: string;
        };
        /** @description API Gateway's own body, on the one answer it does not let an API shape: 413 for a request over its 10 MB or Lambda's 6 MB invoke payload ("Customizing the default gateway response for 413 REQUEST_TOO_LARGE isn't currently supported"). */
        GatewayMessage: {
            /** @example Request Too Long */
            message: string;
        };
    };
    responses: never;
    parameters: {
        /** @description Pets per page. Written as JSON writes an integer (`x-text-pattern`): an optional minus and decimal digits, no plus, leading zero, fraction, exponent or space; anything else is 400. */
        limit: number;
        /** @description Only pets of this status. */
        status: components["schemas"]["PetStatus"];
        /** @description Where the page starts: opaque, taken from a `Link: rel="next"` as it is, for the same `status`. Only the spelling the service gave is taken (canonical base64url); one it did not give, or gave for another `status`, is 400. */
        cursor: string;
        /** @description The pet's id: any int64. One that names no pet (`0`, `-1`, `9223372036854775807`) is 404, as for any unknown id. Written as JSON writes an integer (`x-text-pattern`): an optional minus and decimal digits, no plus, leading zero, fraction, exponent or space; anything else is 400. */
        petId: number;
        /** @description Makes the create safe to retry: the same key with the same body, within 24 hours, answers the pet the first request created (201, `Idempotent-Replayed: true`); with another body, 422; once an operator has removed that pet, 410. Scoped to the API key. Send one whenever the client may retry (after a 503 or 504, or a lost connection). */
        idempotencyKey: string;
    };
    requestBodies: never;
    headers: {
        /** @description Path of the created pet. */
        Location: string;
        /** @description listPets: `<…/v1/pets?limit=N&status=S&cursor=C>; rel="next"` while more pets remain (absent on the last page). getPet: `<…/v1/pets>; rel="successor-version"`, the operation that replaces it. Always absolute: the stage's own address. */
        Link: string;
        /** @description listPets: `<…/v1/pets?limit=N&status=S&cursor=C>; rel="next"` while more pets remain (absent on the last page). getPet: `<…/v1/pets>; rel="successor-version"`, the operation that replaces it. Always absolute: the stage's own address. */
        "Link.optional": string;
        /** @description RFC 9745: when the operation became deprecated (`@` Unix seconds). */
        Deprecation: string;
        /** @description RFC 9745: when the operation became deprecated (`@` Unix seconds). */
        "Deprecation.optional": string;
        /** @description RFC 8594: from this date on the operation answers 410 GONE. */
        Sunset: string;
        /** @description RFC 8594: from this date on the operation answers 410 GONE. */
        "Sunset.optional": string;
        /** @description The bearer challenge; `error="invalid_token"` when a token was sent but refused. Every 401 carries it under this name or, from a deployed stage, as `x-amzn-Remapped-WWW-Authenticate`: API Gateway (REST) renames this header of a function's answer. */
        "WWW-Authenticate.optional": string;
        /** @description The bearer challenge (`WWW-Authenticate`) as a deployed stage delivers it: API Gateway (REST) renames that header of a Lambda proxy answer (AWS, "Amazon API Gateway important notes for REST APIs"). Read either name. */
        "x-amzn-Remapped-WWW-Authenticate.optional": string;
        /** @description Seconds to wait before retrying. */
        "Retry-After": string;
        /** @description On a 415 for a content-encoded body (`Content-Encoding` other than `identity`): the only coding the service takes, `identity` (RFC 7694 section 3). */
        "Accept-Encoding.optional": string;
        /** @description The request id (API Gateway's): in the access log, the request log and every 5xx body as `requestId`; quote it when reporting a failure. API Gateway's own answers carry it as `x-amzn-RequestId` instead. */
        "X-Request-Id": string;
        /** @description The request id (API Gateway's): in the access log, the request log and every 5xx body as `requestId`; quote it when reporting a failure. API Gateway's own answers carry it as `x-amzn-RequestId` instead. */
        "X-Request-Id.optional": string;
        /** @description Present (`true`) when the answer replays the pet an earlier request with the same `Idempotency-Key` created. */
        "Idempotent-Replayed.optional": string;
    };
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    listPets: {
        parameters: {
            query?: {
                /** @description Pets per page. Written as JSON writes an integer (`x-text-pattern`): an optional minus and decimal digits, no plus, leading zero, fraction, exponent or space; anything else is 400. */
                limit?: components["parameters"]["limit"];
                /** @description Only pets of this status. */
                status?: components["parameters"]["status"];
                /** @description Where the page starts: opaque, taken from a `Link: rel="next"` as it is, for the same `status`. Only the spelling the service gave is taken (canonical base64url); one it did not give, or gave for another `status`, is 400. */
                cursor?: components["parameters"]["cursor"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of pets. */
            200: {
                headers: {
                    Link: components["headers"]["Link.optional"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Pet"][];
                };
            };
            /** @description `VALIDATION_FAILED` */
            400: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @constant */
                        code?: "VALIDATION_FAILED";
                        /** @constant */
                        status?: 400;
                    };
                };
            };
            /** @description `UNAUTHORIZED` (also answered by API Gateway) */
            401: {
                headers: {
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate.optional"];
                    "x-amzn-Remapped-WWW-Authenticate": components["headers"]["x-amzn-Remapped-WWW-Authenticate.optional"];
                    "X-Request-Id": components["headers"]["X-Request-Id.optional"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @constant */
                        code?: "UNAUTHORIZED";
                        /** @constant */
                        status?: 401;
                    };
                };
            };
            /** @description `FORBIDDEN` (answered by API Gateway) */
            403: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id.optional"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @constant */
                        code?: "FORBIDDEN";
                        /** @constant */
                        status?: 403;
                    };
                };
            };
            /** @description `PAYLOAD_TOO_LARGE` (answered by API Gateway) */
            413: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id.optional"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": (components["schemas"]["Error"] & {
                        /** @constant */
                        code?: "PAYLOAD_TOO_LARGE";
                        /** @constant */
                        status?: 413;
                    }) | components["schemas"]["GatewayMessage"];
                };
            };
            /** @description `TOO_MANY_REQUESTS` (answered by API Gateway) */
            429: {
                headers: {
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id.optional"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @constant */
                        code?: "TOO_MANY_REQUESTS";
                        /** @constant */
                        status?: 429;
                    };
                };
            };
            /** @description `INTERNAL` */
            500: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @constant */
                        code?: "INTERNAL";
                        /** @constant */
                        status?: 500;
                    };
                };
            };
            /** @description `BAD_GATEWAY` (answered by API Gateway) */
            502: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id.optional"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @constant */
                        code?: "BAD_GATEWAY";
                        /** @constant */
                        status?: 502;
                    };
                };
            };
            /** @description `SERVICE_UNAVAILABLE` (also answered by API Gateway) */
            503: {
                headers: {
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id.optional"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @constant */
                        code?: "SERVICE_UNAVAILABLE";
                        /** @constant */
                        status?: 503;
                    };
                };
            };
            /** @description `GATEWAY_TIMEOUT` (answered by API Gateway) */
            504: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id.optional"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @constant */
                        code?: "GATEWAY_TIMEOUT";
                        /** @constant */
                        status?: 504;
                    };
                };
            };
        };
    };
    createPet: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the create safe to retry: the same key with the same body, within 24 hours, answers the pet the first request created (201, `Idempotent-Replayed: true`); with another body, 422; once an operator has removed that pet, 410. Scoped to the API key. Send one whenever the client may retry (after a 503 or 504, or a lost connection). */
                "Idempotency-Key"?: components["parameters"]["idempotencyKey"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["NewPet"];
            };
        };
        responses: {
            /** @description The stored pet (or, for a retried `Idempotency-Key`, the pet the first request stored). */
            201: {
                headers: {
                    Location: components["headers"]["Location"];
                    "Idempotent-Replayed": components["headers"]["Idempotent-Replayed.optional"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Pet"];
                };
            };
            /** @description `VALIDATION_FAILED` */
            400: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @constant */
                        code?: "VALIDATION_FAILED";
                        /** @constant */
                        status?: 400;
                    };
                };
            };
            /** @description `UNAUTHORIZED` (also answered by API Gateway) */
            401: {
                headers: {
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate.optional"];
                    "x-amzn-Remapped-WWW-Authenticate": components["headers"]["x-amzn-Remapped-WWW-Authenticate.optional"];
                    "X-Request-Id": components["headers"]["X-Request-Id.optional"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @constant */
                        code?: "UNAUTHORIZED";
                        /** @constant */
                        status?: 401;
                    };
                };
            };
            /** @description `FORBIDDEN` (also answered by API Gateway) */
            403: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id.optional"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @constant */
                        code?: "FORBIDDEN";
                        /** @constant */
                        status?: 403;
                    };
                };
            };
            /** @description `IDEMPOTENCY_IN_PROGRESS` */
            409: {
                headers: {
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @constant */
                        code?: "IDEMPOTENCY_IN_PROGRESS";
                        /** @constant */
                        status?: 409;
                    };
                };
            };
            /** @description `GONE` */
            410: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @constant */
                        code?: "GONE";
                        /** @constant */
                        status?: 410;
                    };
                };
            };
            /** @description `PAYLOAD_TOO_LARGE` (also answered by API Gateway) */
            413: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id.optional"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": (components["schemas"]["Error"] & {
                        /** @constant */
                        code?: "PAYLOAD_TOO_LARGE";
                        /** @constant */
                        status?: 413;
                    }) | components["schemas"]["GatewayMessage"];
                };
            };
            /** @description `UNSUPPORTED_MEDIA_TYPE` */
            415: {
                headers: {
                    "Accept-Encoding": components["headers"]["Accept-Encoding.optional"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @constant */
                        code?: "UNSUPPORTED_MEDIA_TYPE";
                        /** @constant */
                        status?: 415;
                    };
                };
            };
            /** @description `IDEMPOTENCY_KEY_REUSED` */
            422: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @constant */
                        code?: "IDEMPOTENCY_KEY_REUSED";
                        /** @constant */
                        status?: 422;
                    };
                };
            };
            /** @description `TOO_MANY_REQUESTS` (also answered by API Gateway) */
            429: {
                headers: {
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id.optional"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @constant */
                        code?: "TOO_MANY_REQUESTS";
                        /** @constant */
                        status?: 429;
                    };
                };
            };
            /** @description `INTERNAL` */
            500: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @constant */
                        code?: "INTERNAL";
                        /** @constant */
                        status?: 500;
                    };
                };
            };
            /** @description `BAD_GATEWAY` (answered by API Gateway) */
            502: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id.optional"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @constant */
                        code?: "BAD_GATEWAY";
                        /** @constant */
                        status?: 502;
                    };
                };
            };
            /** @description `SERVICE_UNAVAILABLE` (also answered by API Gateway) */
            503: {
                headers: {
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id.optional"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @constant */
                        code?: "SERVICE_UNAVAILABLE";
                        /** @constant */
                        status?: 503;
                    };
                };
            };
            /** @description `GATEWAY_TIMEOUT` (answered by API Gateway) */
            504: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id.optional"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @constant */
                        code?: "GATEWAY_TIMEOUT";
                        /** @constant */
                        status?: 504;
                    };
                };
            };
        };
    };
    getPet: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The pet's id: any int64. One that names no pet (`0`, `-1`, `9223372036854775807`) is 404, as for any unknown id. Written as JSON writes an integer (`x-text-pattern`): an optional minus and decimal digits, no plus, leading zero, fraction, exponent or space; anything else is 400. */
                petId: components["parameters"]["petId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The pet. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    Sunset: components["headers"]["Sunset"];
                    Link: components["headers"]["Link"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Pet"];
                };
            };
            /** @description `VALIDATION_FAILED` */
            400: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    Sunset: components["headers"]["Sunset"];
                    Link: components["headers"]["Link"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @constant */
                        code?: "VALIDATION_FAILED";
                        /** @constant */
                        status?: 400;
                    };
                };
            };
            /** @description `UNAUTHORIZED` (also answered by API Gateway) */
            401: {
                headers: {
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate.optional"];
                    "x-amzn-Remapped-WWW-Authenticate": components["headers"]["x-amzn-Remapped-WWW-Authenticate.optional"];
                    "X-Request-Id": components["headers"]["X-Request-Id.optional"];
                    Deprecation: components["headers"]["Deprecation.optional"];
                    Sunset: components["headers"]["Sunset.optional"];
                    Link: components["headers"]["Link.optional"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @constant */
                        code?: "UNAUTHORIZED";
                        /** @constant */
                        status?: 401;
                    };
                };
            };
            /** @description `FORBIDDEN` (answered by API Gateway) */
            403: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id.optional"];
                    Deprecation: components["headers"]["Deprecation.optional"];
                    Sunset: components["headers"]["Sunset.optional"];
                    Link: components["headers"]["Link.optional"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @constant */
                        code?: "FORBIDDEN";
                        /** @constant */
                        status?: 403;
                    };
                };
            };
            /** @description `NOT_FOUND` */
            404: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    Sunset: components["headers"]["Sunset"];
                    Link: components["headers"]["Link"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @constant */
                        code?: "NOT_FOUND";
                        /** @constant */
                        status?: 404;
                    };
                };
            };
            /** @description `GONE` */
            410: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    Sunset: components["headers"]["Sunset"];
                    Link: components["headers"]["Link"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @constant */
                        code?: "GONE";
                        /** @constant */
                        status?: 410;
                    };
                };
            };
            /** @description `PAYLOAD_TOO_LARGE` (answered by API Gateway) */
            413: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id.optional"];
                    Deprecation: components["headers"]["Deprecation.optional"];
                    Sunset: components["headers"]["Sunset.optional"];
                    Link: components["headers"]["Link.optional"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": (components["schemas"]["Error"] & {
                        /** @constant */
                        code?: "PAYLOAD_TOO_LARGE";
                        /** @constant */
                        status?: 413;
                    }) | components["schemas"]["GatewayMessage"];
                };
            };
            /** @description `TOO_MANY_REQUESTS` (answered by API Gateway) */
            429: {
                headers: {
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id.optional"];
                    Deprecation: components["headers"]["Deprecation.optional"];
                    Sunset: components["headers"]["Sunset.optional"];
                    Link: components["headers"]["Link.optional"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @constant */
                        code?: "TOO_MANY_REQUESTS";
                        /** @constant */
                        status?: 429;
                    };
                };
            };
            /** @description `INTERNAL` */
            500: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    Sunset: components["headers"]["Sunset"];
                    Link: components["headers"]["Link"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @constant */
                        code?: "INTERNAL";
                        /** @constant */
                        status?: 500;
                    };
                };
            };
            /** @description `BAD_GATEWAY` (answered by API Gateway) */
            502: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id.optional"];
                    Deprecation: components["headers"]["Deprecation.optional"];
                    Sunset: components["headers"]["Sunset.optional"];
                    Link: components["headers"]["Link.optional"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @constant */
                        code?: "BAD_GATEWAY";
                        /** @constant */
                        status?: 502;
                    };
                };
            };
            /** @description `SERVICE_UNAVAILABLE` (also answered by API Gateway) */
            503: {
                headers: {
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id.optional"];
                    Deprecation: components["headers"]["Deprecation.optional"];
                    Sunset: components["headers"]["Sunset.optional"];
                    Link: components["headers"]["Link.optional"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @constant */
                        code?: "SERVICE_UNAVAILABLE";
                        /** @constant */
                        status?: 503;
                    };
                };
            };
            /** @description `GATEWAY_TIMEOUT` (answered by API Gateway) */
            504: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id.optional"];
                    Deprecation: components["headers"]["Deprecation.optional"];
                    Sunset: components["headers"]["Sunset.optional"];
                    Link: components["headers"]["Link.optional"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @constant */
                        code?: "GATEWAY_TIMEOUT";
                        /** @constant */
                        status?: 504;
                    };
                };
            };
        };
    };
}
/** The path every base URL of the API ends in. */
export const BASE_PATH = "/v1";
