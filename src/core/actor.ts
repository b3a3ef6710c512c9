/**
 * Who performs a mutation, passed to every service that changes something so the service itself
 * enforces who may (DESIGN §2; docs/permissions.md). People act through pages, bots through the
 * API with their token, the operator through the CLI on the machine itself — outside every server's
 * permissions, as the one who runs the service.
 */
export type Actor =
  | { kind: 'person'; id: string }
  | { kind: 'bot'; id: string; applicationId: string }
  | { kind: 'operator' };

export type PersonActor = Extract<Actor, { kind: 'person' }>;

export function person(id: string): PersonActor {
  return { kind: 'person', id };
}

/** The CLI's actor (`gatehouse …` commands run by whoever runs the service). */
export const OPERATOR: Actor = Object.freeze({ kind: 'operator' });
