/** What tells one deployed instance of a stack from the next one of the same name. */
import { Aws, Fn } from 'aws-cdk-lib';

/**
 * The stack id's first group of hex digits (arn:...:stack/<name>/<uuid>): a stack deployed again after a
 * teardown gets a new one, so a name ending with it never collides with a resource the old stack retained.
 */
export const stackInstanceId = (): string => Fn.select(0, Fn.split('-', Fn.select(2, Fn.split('/', Aws.STACK_ID))));
