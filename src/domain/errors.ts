// Every error code Herald answers with and its HTTP status, in one catalog (README, Errors).
// Domain rules throw DomainError; one mapper (handlers/reply.ts `toReply`) renders it in the
// error shape of the route that failed.

export const ERRORS = {
  VALIDATION_ERROR: 400,
  INVALID_TRAITS: 400,
  IDENTIFIER_CONFLICT: 400,
  BATCH_TOO_LARGE: 400,
  INVALID_SEND_POLICY: 400,
  INVALID_SUPPRESSION_TYPE: 400,
  PUBLIC_KEY_PERMISSION: 400,
  /** A campaign that cannot go live: every problem is listed in details (docs/campaigns-runtime.md). */
  ACTIVATION_FAILED: 400,
  /** A known-bad trigger_config key (`event_name`), refused on create and update. */
  INVALID_TRIGGER_CONFIG: 400,
  /** Rendered as the fixed 403 body, which carries no code. */
  FORBIDDEN: 403,
  PERSON_NOT_FOUND: 404,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  /** Deleting an active or scheduled campaign (docs/campaigns-runtime.md). */
  CAMPAIGN_ACTIVE: 409,
  /** Deleting a template an active or scheduled campaign uses (docs/campaigns-runtime.md). */
  TEMPLATE_IN_USE: 409,
  /** Deleting a segment an active or scheduled campaign targets (docs/audiences.md). */
  SEGMENT_IN_USE: 409,
  /** A webhook trigger whose Idempotency-Key another trigger holds, still in progress (docs/ingest.md). */
  TRIGGER_IN_PROGRESS: 409,
  /** Resending a webhook event that is still being delivered (docs/webhooks.md). */
  DELIVERY_PENDING: 409,
  PAYLOAD_TOO_LARGE: 413,
  /** An Idempotency-Key reused for the campaign with different trigger_data (docs/ingest.md). */
  IDEMPOTENCY_KEY_REUSED: 422,
  INTERNAL_ERROR: 500,
  /** A single push send that no device accepted (docs/channels.md). */
  PROVIDER_ERROR: 500,
  NOT_IMPLEMENTED: 501,
  /** A part Herald depends on is down or saturated: nothing was done, retry shortly (ARCHITECTURE rule 4). */
  SERVICE_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERRORS;

/** Headers a code is always answered with, whichever route's shape renders it. */
export const ERROR_HEADERS: Partial<Record<ErrorCode, Readonly<Record<string, string>>>> = {
  SERVICE_UNAVAILABLE: { 'Retry-After': '1' },
};

/** A field and what is wrong with it, as listed in `details`. */
export interface FieldError {
  field: string;
  message: string;
}

export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    /** Field errors (a VALIDATION_ERROR with them renders like a schema failure) or any detail object. */
    readonly details?: FieldError[] | Record<string, unknown>,
  ) {
    super(message);
  }
}

/**
 * An infrastructure outage (the Log, the idempotency claim store, a saturated pool): answered
 * 503 with Retry-After by the one mapper. `message` is what the client reads; what the part
 * failed with is `cause`, logged and never shown (it may name internal hosts).
 */
export class Unavailable extends DomainError {
  constructor(message: string, cause?: unknown) {
    super('SERVICE_UNAVAILABLE', message);
    this.cause = cause;
  }
}

/**
 * Input that is malformed field by field (what a schema would have said, e.g. a leap-second
 * timestamp): answered in the schema-failure shape, `Bad Request` with `details` on key routes.
 */
export class InvalidInput extends DomainError {
  constructor(message: string, readonly fields: FieldError[]) {
    super('VALIDATION_ERROR', message, fields);
  }
}

/** `code` with a message naming the fields: the usual way a rule reports several problems. */
export function fieldProblems(code: ErrorCode, what: string, problems: FieldError[]): DomainError {
  return new DomainError(code, `${what}: ${problems.map((p) => `${p.field} ${p.message}`).join('; ')}`, problems);
}
