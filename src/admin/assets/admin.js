// CRM console enhancements. Every page works without this file; it adds copy buttons, confirmations,
// focus on form errors and the small-screen menu toggle.
(() => {
  document.documentElement.classList.add('js');

  for (const button of document.querySelectorAll('[data-copy]')) {
    const input = document.getElementById(button.dataset.copy);
    const status = button.closest('section')?.querySelector('.copy-status');
    if (!input) continue;
    button.hidden = false;
    button.addEventListener('click', async () => {
      input.select();
      let copied = false;
      try {
        await navigator.clipboard.writeText(input.value);
        copied = true;
      } catch {
        copied = document.execCommand('copy');
      }
      if (status) status.textContent = copied ? 'Copied to the clipboard.' : 'Selected: press Ctrl+C (⌘C) to copy.';
    });
  }

  for (const form of document.querySelectorAll('form[data-confirm]')) {
    form.addEventListener('submit', (event) => {
      if (!window.confirm(form.dataset.confirm)) event.preventDefault();
    });
  }

  document.querySelector('[data-autofocus]')?.focus();

  const menu = document.querySelector('.menu-button');
  const nav = document.getElementById('sidenav');
  if (menu && nav) {
    menu.hidden = false;
    nav.classList.add('is-collapsed');
    menu.addEventListener('click', () => {
      const open = nav.classList.toggle('is-collapsed') === false;
      menu.setAttribute('aria-expanded', String(open));
    });
  }
})();
