/**
 * The workflow page's Pending Activities tab (UI 2.54.1): each pending
 * activity's card with its state badge and the Pause / Unpause, Update and
 * Reset buttons, each of which opens a confirmation dialog. The UI keeps a
 * hidden copy of every dialog, so buttons and dialogs are taken visible only.
 */
import type { Locator, Page } from 'playwright-core';

export type ActivityBadge = 'STARTED' | 'SCHEDULED' | 'PAUSED' | 'PAUSE REQUESTED';

export class PendingActivity {
  constructor(
    readonly page: Page,
    private readonly activityType: string,
  ) {}

  async openTab(): Promise<void> {
    await this.page.getByRole('tab', { name: /^Pending Activities/ }).click();
    await this.page.getByText(this.activityType, { exact: true }).first().waitFor();
  }

  /** The card's state badge; the tab refreshes itself, but reload as an operator would if it lags. */
  async waitForBadge(badge: ActivityBadge, attempts = 4): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        // Its text is capitalised by CSS only.
        await this.page
          .getByText(new RegExp(`^\\s*${badge}\\s*$`, 'i'))
          .first()
          .waitFor({ state: 'visible', timeout: 10_000 });
        return;
      } catch (err) {
        if (attempt >= attempts) throw err;
        await this.page.reload();
        await this.openTab();
      }
    }
  }

  private button(name: string): Locator {
    return this.page.getByRole('button', { name, exact: true }).filter({ visible: true }).first();
  }

  private dialog(title: RegExp): Locator {
    return this.page.getByRole('dialog', { name: title }).filter({ visible: true });
  }

  /** Pause -> a reason -> the dialog's Pause; `shot` sees the filled dialog. */
  async pause(reason: string, shot: () => Promise<unknown>): Promise<void> {
    await this.button('Pause').click();
    const dialog = this.dialog(/^Pause Activity/);
    await dialog.getByPlaceholder('Enter a reason').fill(reason);
    await shot();
    await this.confirm(dialog, 'Pause');
  }

  async unpause(shot: () => Promise<unknown>): Promise<void> {
    await this.button('Unpause').click();
    const dialog = this.dialog(/^Unpause Activity/);
    await shot();
    await this.confirm(dialog, 'Unpause');
  }

  /** Reset -> optionally tick "Reset Heartbeat Details" -> the dialog's Reset. */
  async reset(clearHeartbeatDetails: boolean, shot: () => Promise<unknown>): Promise<void> {
    await this.button('Reset').click();
    const dialog = this.dialog(/^Reset Activity/);
    if (clearHeartbeatDetails) {
      await dialog.getByTestId('reset-heartbeat-details-label').click();
      await dialog
        .getByRole('checkbox')
        .first()
        .isChecked()
        .then((checked) => {
          if (!checked) throw new Error('"Reset Heartbeat Details" did not tick');
        });
    }
    await shot();
    await this.confirm(dialog, 'Reset');
  }

  private async confirm(dialog: Locator, button: string): Promise<void> {
    await dialog.getByRole('button', { name: button, exact: true }).click();
    await dialog.waitFor({ state: 'hidden' });
  }
}
