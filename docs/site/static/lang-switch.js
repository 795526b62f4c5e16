// The language switcher (docs.site.zh) keeps what the address holds beyond the page: a search's
// ?q=, the home table's filters, the section in the #hash, so the other edition opens at the same place.
document.addEventListener("click", (event) => {
  const link = event.target.closest("a[data-lang-switch]");
  if (!link) return;
  const url = new URL(link.href, window.location.href);
  url.search = window.location.search;
  url.hash = window.location.hash;
  link.href = url.toString();
});
