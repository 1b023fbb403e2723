/** @petstore/client: the typed, retry-safe client of the Pet Store Inventory API. */
export {
  nextLink,
  petStoreClient,
  type CallOptions,
  type ClientOptions,
  type Created,
  type CreateOptions,
  type ListQuery,
  type NewPet,
  type Page,
  type Pet,
  type PetStatus,
  type PetStoreClient,
} from './client.ts';
export { describeFetchFailure, PetStoreError, PetStoreNetworkError, type ErrorBody, type ErrorCode } from './errors.ts';
export {
  DEFAULT_RETRY,
  isRetriedAnswer,
  retryAfterMs,
  retryDelayMs,
  retryPolicy,
  type RetryOptions,
  type RetryPolicy,
} from './retry.ts';
export { BASE_PATH, type components, type operations, type paths } from './schema.ts';
