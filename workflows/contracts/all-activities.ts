/**
 * Every activity any workflow proxies: what the worker must register, checked
 * by the compiler. Its own file, so the import and dry-run contracts need not
 * import each other.
 */
import type { ImportActivities, LedgerActivities, NightlyActivities } from './activities.js';
import type { DryRunActivities } from './dry-run.js';
import type { NotifyActivities } from './notification.js';

export type AllActivities = ImportActivities &
  NightlyActivities &
  LedgerActivities &
  DryRunActivities &
  NotifyActivities;
