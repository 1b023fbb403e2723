/**
 * Test support for the fault proxy (tools/stage-emulator/src/alarms/faultProxy.ts): it lives here so that `npm run load`,
 * which starts the proxy too, never loads the test framework.
 */
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { startFaultProxy, type FaultProxy } from '@petstore/stage-emulator/faultProxy';

/**
 * A fault proxy in front of this test file's store (`useEmbeddedStore()`'s endpoint), started once,
 * with no fault and a zero count before each test.
 */
export function useFaultProxy(target: () => string): () => FaultProxy {
  let proxy: FaultProxy | undefined;
  beforeAll(async () => {
    proxy = await startFaultProxy(target());
  });
  afterAll(() => proxy?.close());
  beforeEach(() => {
    if (!proxy) return;
    proxy.fault = undefined;
    proxy.injected = 0;
    proxy.observe = undefined;
  });
  return () => {
    if (!proxy) throw new Error('useFaultProxy() has not started yet');
    return proxy;
  };
}
