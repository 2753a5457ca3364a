/**
 * The text colour on a tenant's primary colour (docs/branding.md): white when it reaches the
 * WCAG 2.2 AA contrast ratio for normal text (4.5:1, success criterion 1.4.3), else black. One
 * of the two always reaches it (the ratios with white and with black multiply to 21, so the
 * larger is at least √21 ≈ 4.58), so no colour has to be refused.
 */

/** Relative luminance of `#rrggbb` (WCAG 2.2, "relative luminance"). */
export function luminance(hex: string): number {
  const channel = (i: number) => {
    const c = parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
}

/** The contrast ratio of two colours (WCAG 2.2, "contrast ratio"), 1 to 21. */
export function contrastRatio(a: string, b: string): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

/** White on the colour when that is legible (AA), else black. */
export function textColourOn(hex: string): '#ffffff' | '#000000' {
  return contrastRatio(hex, '#ffffff') >= 4.5 ? '#ffffff' : '#000000';
}
