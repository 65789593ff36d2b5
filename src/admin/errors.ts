/** A console answer other than a page: 403 (CSRF, administrators only) or 404, rendered as an HTML page. */
export class ConsoleError extends Error {
  constructor(
    readonly status: 403 | 404,
    readonly title: string,
    message: string,
  ) {
    super(message);
    this.name = 'ConsoleError';
  }
}

export const csrfRefused = () =>
  new ConsoleError(403, 'Form expired', 'This form was not sent from this console session, or the session changed since the page was loaded. Go back, reload the page and try again.');

export const adminsOnly = () =>
  new ConsoleError(403, 'Administrators only', 'Only administrators of your organization can do this. Ask one of them, or go back.');

export const pageNotFound = () => new ConsoleError(404, 'Page not found', 'There is no page at this address, or it belongs to another organization.');
