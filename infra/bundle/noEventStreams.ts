/**
 * The Lambda bundles' stand-in for `@smithy/core/event-streams` (aliased in infra/bundle/bundling.ts).
 * The SDK loads event-stream support (about 19 kB) only for an operation with an event-stream
 * member, and DynamoDB's JSON protocol has none. Should the SDK ever reach for it, these throw:
 * test/infra/bundle.test.ts runs every DynamoDB operation the functions use through the bundles,
 * so a call that did reach them would fail there.
 */
const notBundled = (): never => {
  throw new Error(
    'Event streams are not bundled in the Lambda functions (infra/bundle/noEventStreams.ts): DynamoDB has no event-stream operation.',
  );
};

/** What `HttpProtocol.loadEventStreamCapability` takes from the real module. */
export const eventStreamSerdeProvider = notBundled;
export class EventStreamSerde {
  constructor() {
    notBundled();
  }
}
