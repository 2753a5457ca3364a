/**
 * Every catalogue area, one import per line (an area is one file, so work on different pages
 * touches different files).
 */
import type { AreaCatalogue } from '../types.js';
import { account } from './account.js';
import { accountSignIns } from './account-sign-ins.js';
import { common } from './common.js';
import { landing } from './landing.js';

export const CATALOGUES: Record<string, AreaCatalogue> = {
  account,
  accountSignIns,
  common,
  landing,
};
