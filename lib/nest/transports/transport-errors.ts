import { loadOptionalPeer, OptionalPeerMissingError } from '../../core';
import type { LockErrorAnswer } from './lock-error-answer';

// Each transport's own error class, loaded from its optional peer the first time a lock error is
// answered in that context (never at package load): an app that runs a GraphQL resolver, a
// microservice or a gateway has the peer installed.

type ErrorClass<A extends unknown[]> = new (...args: A) => Error;
type GraphqlModule = { GraphQLError: ErrorClass<[string, { extensions: Record<string, unknown> }]> };
type MicroservicesModule = { RpcException: ErrorClass<[object]> };
type WebsocketsModule = { WsException: ErrorClass<[object]> };

/** The fields a client reads; `retryAfterMs` only when there is one. */
export function answerFields(answer: LockErrorAnswer): {
  code: string;
  message: string;
  retryAfterMs?: number;
} {
  const { code, message, retryAfterMs } = answer;
  return retryAfterMs === undefined ? { code, message } : { code, message, retryAfterMs };
}

/**
 * A `GraphQLError` with `extensions: { code, retryAfterMs? }`. Without `graphql` resolvable from
 * here (a bundler, a monorepo), an Error with the same message and `extensions`: graphql-js copies
 * an error's `extensions` into the response, so the client gets the same answer.
 */
export function createGraphqlError(answer: LockErrorAnswer): Error {
  const { message, ...extensions } = answerFields(answer);
  const graphql = loadOptionalPeer<GraphqlModule>('graphql', () => require('graphql'));
  if (graphql) return new graphql.GraphQLError(message, { extensions });
  return Object.assign(new Error(message), { extensions });
}

/** An `RpcException` whose error object is `{ status: 'error', code, message, retryAfterMs? }`. */
export function createRpcException(answer: LockErrorAnswer): Error {
  const microservices = loadOptionalPeer<MicroservicesModule>('@nestjs/microservices', () =>
    require('@nestjs/microservices'),
  );
  if (!microservices) {
    throw new OptionalPeerMissingError(
      '@nestjs/microservices',
      'Answering lock errors over RPC',
      'an override of createRpcException()',
    );
  }
  return new microservices.RpcException({ status: 'error', ...answerFields(answer) });
}

/** A `WsException` whose error object is `{ status: 'error', code, message, retryAfterMs? }`. */
export function createWsException(answer: LockErrorAnswer): Error {
  const websockets = loadOptionalPeer<WebsocketsModule>('@nestjs/websockets', () =>
    require('@nestjs/websockets'),
  );
  if (!websockets) {
    throw new OptionalPeerMissingError(
      '@nestjs/websockets',
      'Answering lock errors over WebSockets',
      'an override of createWsException()',
    );
  }
  return new websockets.WsException({ status: 'error', ...answerFields(answer) });
}
