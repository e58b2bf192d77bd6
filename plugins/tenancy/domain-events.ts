import type { FastifyBaseLogger } from 'fastify'
import fp from 'fastify-plugin'

/** A new tenant and its OWNER exist (committed). */
export interface OwnerRegisteredEvent {
  tenantId: number
  tenantSlug: string
  ownerUserId: number
  occurredAt: Date
}

/**
 * In-process domain events, keyed by event name. Published only after the transaction that caused them has
 * committed.
 */
export interface DomainEvents {
  OwnerRegisteredEvent: OwnerRegisteredEvent
}

type Subscriber<K extends keyof DomainEvents> = (event: DomainEvents[K]) => unknown

export interface EventBus {
  subscribe<K extends keyof DomainEvents>(name: K, subscriber: Subscriber<K>): () => void
  /**
   * Delivers to every subscriber; a failing subscriber is logged (on `log`: the publishing request's, so the line
   * carries its request id) and never fails the publisher.
   */
  publish<K extends keyof DomainEvents>(name: K, event: DomainEvents[K], log?: FastifyBaseLogger): Promise<void>
}

declare module 'fastify' {
  interface FastifyInstance {
    events: EventBus
  }
}

export function createEventBus(log: FastifyBaseLogger): EventBus {
  const subscribers = new Map<keyof DomainEvents, Set<Subscriber<keyof DomainEvents>>>()
  return {
    subscribe(name, subscriber) {
      const set = subscribers.get(name) ?? new Set()
      set.add(subscriber as Subscriber<keyof DomainEvents>)
      subscribers.set(name, set)
      return () => set.delete(subscriber as Subscriber<keyof DomainEvents>)
    },
    async publish(name, event, publisherLog = log) {
      await Promise.all(
        [...(subscribers.get(name) ?? [])].map(async (subscriber) => {
          try {
            await subscriber(event)
          } catch (error) {
            publisherLog.error({ err: error, event: name }, 'event subscriber failed')
          }
        }),
      )
    },
  }
}

export default fp(
  async (app) => {
    app.decorate('events', createEventBus(app.log))
  },
  { name: 'domain-events' },
)
