"""What every view must hold at every phone width (issue 42): nothing runs off the screen, no label
is cut, every target is at least 44 x 44 px, and nothing moves for a person who asked for less motion.

Text at 200 %: Chromium's default font size set to 32 px (CDP ``Page.setFontSizes``), which is what
a person's own text-size setting does; the page sets its type in rem, so it follows. It applies to
the page as it stands, like a colour scheme changed with ``page.emulate_media``, so one load of a
view is checked in every combination. (A screenshot puts the default size back: take none between.)
"""

from __future__ import annotations

TEXT_SIZES = {"100%": (16, 13), "200%": (32, 26)}  # (standard, monospace) default font sizes, px

CHECK = """() => {
    const vw = window.innerWidth;
    const problems = [];
    const shown = (e) => {
        const r = e.getBoundingClientRect();
        return r.width > 0 && r.height > 0 && getComputedStyle(e).visibility !== 'hidden';
    };
    const say = (e) => {
        const text = (e.getAttribute('aria-label') || e.textContent || e.value || '').replace(/\\s+/g, ' ').trim();
        return `<${e.tagName.toLowerCase()}${e.dataset.action ? ' ' + e.dataset.action : ''}> "${text.slice(0, 40)}"`;
    };
    if (document.documentElement.scrollWidth > vw) {
        problems.push(`the page is ${document.documentElement.scrollWidth} px wide in a ${vw} px screen`);
    }
    // Whatever runs off the screen (its outermost element only: its children go with it).
    for (const e of document.body.querySelectorAll('*')) {
        if (!shown(e)) continue;
        const r = e.getBoundingClientRect();
        if (r.right <= vw + 0.5 && r.left >= -0.5) continue;
        const p = e.parentElement.getBoundingClientRect();
        if (p.right > vw + 0.5 || p.left < -0.5) continue;
        problems.push(`${say(e)} runs off the screen (${Math.round(r.left)} to ${Math.round(r.right)} px)`);
    }
    const controls = document.querySelectorAll('button, select, summary, a[href], label, input, textarea');
    for (const e of controls) {
        if (!shown(e) || e.closest('.sr-only')) continue;
        const style = getComputedStyle(e);
        const r = e.getBoundingClientRect();
        const tag = e.tagName.toLowerCase();
        const inline = style.display === 'inline';
        const field = tag === 'input' || tag === 'textarea';
        // The label whole: on one line or several, never cut (by its box, an ellipsis or a clip).
        if (!field && !inline && (e.scrollWidth > e.clientWidth + 1 || e.scrollHeight > e.clientHeight + 1)) {
            problems.push(`${say(e)}: its label is cut (${e.scrollWidth}x${e.scrollHeight} `
                + `in ${e.clientWidth}x${e.clientHeight})`);
        }
        if (!field && !inline && style.textOverflow === 'ellipsis' && style.overflowX !== 'visible'
            && e.scrollWidth > e.clientWidth) problems.push(`${say(e)}: its label ends in an ellipsis`);
        // The target: a control, or a link standing on its own (a link inside a sentence is exempt).
        let target = null;
        if (tag === 'input' && (e.type === 'checkbox' || e.type === 'radio')) {
            target = (e.id && document.querySelector(`label[for="${e.id}"]`)) || e.closest('label') || e;
            target = target.getBoundingClientRect();
            const row = e.closest('.choice, .toggle label');
            if (row) target = row.getBoundingClientRect();
        } else if (tag !== 'label' && !(tag === 'a' && inline)) {
            target = r;
        }
        if (target && (target.width < 44 - 0.01 || target.height < 44 - 0.01)) {
            problems.push(`${say(e)}: a target of ${Math.round(target.width)}x${Math.round(target.height)} px`);
        }
    }
    // Reduced motion: no transition or animation takes any time.
    const moving = new Set();
    for (const e of document.querySelectorAll('*')) {
        const style = getComputedStyle(e);
        const times = (style.transitionDuration + ',' + style.animationDuration).split(',')
            .map((t) => parseFloat(t) || 0);
        if (times.some((t) => t > 0)) moving.add(say(e));
    }
    for (const m of [...moving].slice(0, 5)) problems.push(`${m} moves although reduced motion is asked for`);
    return [getComputedStyle(document.documentElement).fontSize, problems];
}"""


def set_text_size(cdp, size: str) -> None:
    standard, fixed = TEXT_SIZES[size]
    cdp.send("Page.setFontSizes", {"fontSizes": {"standard": standard, "fixed": fixed}})


def problems(page, cdp, where: str, schemes=("light", "dark"), sizes=tuple(TEXT_SIZES)) -> list[str]:
    """Every problem of the view as it stands, in each colour scheme and text size ("where: ...")."""
    found: list[str] = []
    for size in sizes:
        set_text_size(cdp, size)
        for scheme in schemes:
            page.emulate_media(color_scheme=scheme, reduced_motion="reduce")
            root, found_here = page.evaluate(CHECK)
            assert root == f"{TEXT_SIZES[size][0]}px", f"{where}: the text size is {root}, not {size}"
            found += [f"{where} ({scheme}, text {size}): {p}" for p in found_here]
    set_text_size(cdp, "100%")
    return found
