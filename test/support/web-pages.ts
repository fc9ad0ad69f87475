// Pages the web agent's tests serve and extract: an article wrapped in the usual site chrome
// (navigation, scripts, ads, sidebar, footer), each piece of chrome carrying a marker to look for.

/** Text that must never appear in extracted article text. */
export const chromeMarkers = [
  'NAV_MARKER',
  'SCRIPT_MARKER',
  'STYLE_MARKER',
  'AD_MARKER',
  'SPONSOR_MARKER',
  'SIDEBAR_MARKER',
  'FOOTER_MARKER',
  'INLINE_SCRIPT_MARKER',
  'COOKIE_MARKER',
];

/** Sentences of the article body, in order. */
export const articleParagraphs = [
  'Tides are the regular rise and fall of the sea. They are caused by the gravitational pull of the Moon and the Sun acting on the rotating Earth; the Moon is closer, so its pull matters most.',
  'Because the Earth turns beneath two bulges of water each day, most coasts see two high tides and two low tides roughly every twenty-four hours and fifty minutes.',
  'Spring tides happen when the Sun and the Moon line up, and neap tides when they stand at right angles. In some bays the difference between the two reaches several metres.',
  'Harbour masters publish tide tables a year ahead, because the motions of the Earth, the Moon and the Sun are known precisely enough to predict the water for every hour.',
];

export const articleTitle = 'How Tides Work';
export const articleByline = 'Marina Shore';

export const articlePage = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>${articleTitle}</title>
  <meta name="description" content="Why the sea rises and falls twice a day.">
  <script>window.analytics = "SCRIPT_MARKER";</script>
  <style>body::before { content: "STYLE_MARKER"; }</style>
</head>
<body>
  <header class="site-header"><a href="/">Ocean Facts</a></header>
  <nav class="menu"><ul>
    <li><a href="/">Home</a></li><li><a href="/about">NAV_MARKER About us</a></li>
    <li><a href="/contact">Contact</a></li>
  </ul></nav>
  <div class="ad-slot" id="top-ad">AD_MARKER Buy a boat today, 50% off!</div>
  <div class="cookie-banner">COOKIE_MARKER We use cookies.</div>
  <main>
    <article>
      <h1>${articleTitle}</h1>
      <p class="byline">By <span class="author">${articleByline}</span></p>
      <p>${articleParagraphs[0]}</p>
      <p>${articleParagraphs[1]}</p>
      <div class="advertisement sponsored">SPONSOR_MARKER Visit the aquarium this weekend.</div>
      <p>${articleParagraphs[2]}</p>
      <script>console.log("INLINE_SCRIPT_MARKER");</script>
      <p>${articleParagraphs[3]}</p>
    </article>
  </main>
  <aside class="sidebar"><h3>Related</h3><ul><li><a href="/waves">SIDEBAR_MARKER Waves</a></li></ul></aside>
  <footer class="site-footer">FOOTER_MARKER Copyright Ocean Facts</footer>
</body>
</html>`;
