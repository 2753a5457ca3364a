/**
 * Every catalogue area, one import per line (an area is one file, so work on different pages
 * touches different files).
 */
import type { AreaCatalogue } from '../types.js';
import { common } from './common.js';
import { mail } from './mail.js';

export const CATALOGUES: Record<string, AreaCatalogue> = {
  common,
  mail,
};
