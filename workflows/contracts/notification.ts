/**
 * What a workflow asks the `notify` activity to send: a webhook event an
 * operator's chat or pager receives. Built in the workflow, so it never holds
 * a secret (the same rule as history: anyone with Temporal UI access reads it).
 */
export const NOTIFICATION_KINDS = ['import-failed', 'import-awaiting-operator', 'nightly-failures'] as const;
export type NotificationKind = (typeof NOTIFICATION_KINDS)[number];

export interface NotificationInput {
  /**
   * Stable per event (workflow id, run id, kind and, for a run that can wait
   * more than once, the wait's number): a receiver drops a delivery whose id it
   * has seen, since the activity sends again whenever it is not sure the last
   * one arrived.
   */
  id: string;
  kind: NotificationKind;
  /** One line for a human: what happened and what to do. */
  text: string;
  /** Structured facts: workflow id, file, step, failure type. */
  fields: Record<string, string>;
}

export interface NotifyActivities {
  notify(input: NotificationInput): Promise<void>;
}
