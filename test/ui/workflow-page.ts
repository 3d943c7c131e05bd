/**
 * The Temporal Web UI's workflow page (UI 2.54.1), driven as an operator
 * drives it: by the roles and texts on screen. Where the UI renders each
 * dialog twice (a hidden copy keeps the same ids, so labels do not resolve),
 * the visible dialog is found by its role and title and fields by the name
 * they do expose.
 */
import type { Locator, Page } from 'playwright-core';

type WorkflowStatus = 'Running' | 'Completed' | 'Failed';

export class WorkflowPage {
  constructor(
    readonly page: Page,
    private readonly uiUrl: string,
    private readonly namespace: string,
  ) {}

  /** The latest run of a workflow, or one run when `runId` is given. */
  async open(workflowId: string, runId?: string): Promise<void> {
    const base = `${this.uiUrl}/namespaces/${encodeURIComponent(this.namespace)}/workflows/${encodeURIComponent(workflowId)}`;
    await this.page.goto(runId ? `${base}/${encodeURIComponent(runId)}/history` : base);
  }

  /** The status badge in the page header (its text has whitespace around the word). */
  status(status: WorkflowStatus): Locator {
    return this.page.getByRole('status').filter({ hasText: new RegExp(`^\\s*${status}\\s*$`) });
  }

  /**
   * Waits until the header shows `status`. The page refreshes itself while a
   * workflow runs, but not always promptly after it closes: reload as an
   * operator would when it has not changed for a while.
   */
  async waitForStatus(status: WorkflowStatus, attempts = 8): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.status(status).waitFor({ state: 'visible', timeout: 15_000 });
        return;
      } catch (err) {
        if (attempt >= attempts) throw err;
        await this.page.reload();
      }
    }
  }

  /** More Actions -> Send a Signal -> pick `name` from the workflow's declared signals -> Submit. */
  async openSignalDialog(name: string): Promise<Locator> {
    await this.page.getByRole('button', { name: 'More Actions' }).click();
    await this.page.getByRole('menuitem', { name: /send a signal/i }).click();
    const dialog = this.page.getByRole('dialog', { name: 'Send a Signal' });
    await dialog.getByRole('button', { name: /select a signal/i }).click();
    await dialog.getByRole('option', { name, exact: true }).click();
    return dialog;
  }

  async submit(dialog: Locator, button: 'Submit' | 'Confirm'): Promise<void> {
    await dialog.getByRole('button', { name: button, exact: true }).click();
    await dialog.waitFor({ state: 'hidden' });
  }

  /** Reset -> choose the event `<eventId> - WorkflowTaskCompleted` -> give a reason; Confirm is left to the caller. */
  async openResetDialog(workflowTaskCompletedEventId: number, reason: string): Promise<Locator> {
    await this.page.getByRole('button', { name: 'Reset', exact: true }).click();
    const dialog = this.page.getByRole('dialog', { name: 'Reset Workflow' });
    // The event picker's button has no accessible name (its label points at an id the hidden copy shares):
    // the UI's own test id is the one handle on it.
    await dialog.getByTestId('workflow-reset-event-id-select-button').click();
    await dialog
      .getByRole('option', { name: `${workflowTaskCompletedEventId} - WorkflowTaskCompleted`, exact: true })
      .click();
    await dialog.getByRole('textbox', { name: 'Enter a reason' }).fill(reason);
    return dialog;
  }

  /** The notice a reset run leaves on the old run's page, and its link to the new run. */
  resetNotice(): Locator {
    return this.page.getByText('This Workflow has been reset');
  }

  async followResetLink(): Promise<void> {
    await this.page.getByRole('link', { name: 'here' }).click();
  }
}
