// Past the core's public surface: optional peers are loaded the core's one way (errors/optional-peer.ts),
// a literal require that resolves from where this package is installed.
import { ifPeerMissing, OptionalPeerMissingError } from '../../core/internal';
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
  const graphql = graphqlPeer();
  if (graphql) return new graphql.GraphQLError(message, { extensions });
  return Object.assign(new Error(message), { extensions });
}

/** An `RpcException` whose error object is `{ status: 'error', code, message, retryAfterMs? }`. */
export function createRpcException(answer: LockErrorAnswer): Error {
  const microservices = microservicesPeer();
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
  const websockets = websocketsPeer();
  if (!websockets) {
    throw new OptionalPeerMissingError(
      '@nestjs/websockets',
      'Answering lock errors over WebSockets',
      'an override of createWsException()',
    );
  }
  return new websockets.WsException({ status: 'error', ...answerFields(answer) });
}

// Each peer's require is written out inside its own try (lib/core/errors/optional-peer.ts: bundlers see it).
function graphqlPeer(): GraphqlModule | undefined {
  try {
    return require('graphql') as GraphqlModule;
  } catch (error) {
    return ifPeerMissing(error, 'graphql');
  }
}

function microservicesPeer(): MicroservicesModule | undefined {
  try {
    return require('@nestjs/microservices') as MicroservicesModule;
  } catch (error) {
    return ifPeerMissing(error, '@nestjs/microservices');
  }
}

function websocketsPeer(): WebsocketsModule | undefined {
  try {
    return require('@nestjs/websockets') as WebsocketsModule;
  } catch (error) {
    return ifPeerMissing(error, '@nestjs/websockets');
  }
}
