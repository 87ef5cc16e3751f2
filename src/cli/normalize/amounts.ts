/**
 * Reads amounts as finance exports write them: `1.234,50` or `1,234.50` (by `--decimal` and
 * `--thousands`, as pandas' `read_csv` names them), a currency symbol or ISO code before or after
 * the number (`$4.00`, `€ 4,00`, `4.00 EUR`), and negatives as `-42.50` or in accounting brackets
 * `(42.50)`, alone or combined (`($1,000.00)`, `-$42.50`).
 */

/**
 * What reading one amount says: the number and the currency it carried, or why it is not an amount.
 * `currency` is a code written beside the number, or the one currency its symbol stands for (`€`:
 * EUR); `currencies` are the few a symbol may stand for (`¥`: JPY or CNY), when it is not one.
 */
export type AmountReading =
  | {
      ok: true;
      value: number;
      currency: string | undefined;
      currencies: readonly string[] | undefined;
      /** `currency` is three letters that are no ISO 4217 code (`BTC`, or a word such as `NET`): only a row whose currency says the same takes it. */
      unlisted: boolean;
    }
  | { ok: false; message: string };

/**
 * Reads one amount. A successful reading is one object per reader, overwritten by the next call:
 * read it before reading again (a million short-lived objects make V8 grow its young generation).
 */
export type AmountReader = (text: string) => AmountReading;

export interface AmountFormat {
  /** The decimal separator. @default '.' */
  decimal: '.' | ',';
  /** The thousands separator; none by default, so that `1,234` is not silently read as 1234. */
  thousands: ',' | '.' | ' ' | "'" | undefined;
}

/** Significant digits every double holds exactly (DBL_DIG). */
const MAX_SIGNIFICANT_DIGITS = 15;

const DIGIT_0 = 48;
const SPACE = 32;
/** No-break and narrow no-break spaces: what spreadsheets in French and other locales group thousands with. */
const NBSP = 0xa0;
const NARROW_NBSP = 0x202f;
/** 10^0 … 10^22: every power of ten a double holds exactly. */
const POWERS = Array.from({ length: 23 }, (_, n) => 10 ** n);
const CURRENCY_SYMBOL = /^\p{Sc}$/u;
/** U+2212, the typographic minus that word processors and some ledgers write. */
const MINUS_SIGN = '\u2212';
const APOSTROPHE = 39;
/** ’ (U+2019): the Swiss thousands separator as CLDR, macOS and Numbers write it (`1’234.50`). */
const RIGHT_SINGLE_QUOTE = 0x2019;

/** What `£` stands for: the pound sterling and the pounds written with its sign (Crown dependencies' included). */
const POUNDS = ['GBP', 'EGP', 'FKP', 'GIP', 'SHP', 'SSP', 'SYP', 'LBP', 'GGP', 'JEP', 'IMP'];

/**
 * Symbols (with the letter prefixes exports write) that stand for one currency or a few: a row whose
 * currency is none of them is invalid rather than stored with the wrong currency, and one that has
 * no currency gets the symbol's when it stands for one. Any other bare currency sign (`$`) says
 * nothing about which currency it is, and is only stripped; a sign with a letter prefix that is not
 * here (`RD$`) names a currency this table cannot check, and is refused.
 */
const SYMBOL_CURRENCIES: ReadonlyMap<string, readonly string[]> = new Map([
  ['€', ['EUR']],
  ['£', POUNDS],
  ['\uffe1', POUNDS], // fullwidth £
  ['¥', ['JPY', 'CNY']],
  ['\uffe5', ['JPY', 'CNY']], // fullwidth ¥
  ['₹', ['INR']],
  ['₩', ['KRW', 'KPW']],
  ['₽', ['RUB']],
  ['₺', ['TRY']],
  ['₪', ['ILS']],
  ['₫', ['VND']],
  ['₱', ['PHP']],
  ['฿', ['THB', 'BTC']],
  ['₴', ['UAH']],
  ['₦', ['NGN']],
  ['₸', ['KZT']],
  ['₼', ['AZN']],
  ['₾', ['GEL']],
  ['US$', ['USD']],
  ['A$', ['AUD']],
  ['AU$', ['AUD']],
  ['NZ$', ['NZD']],
  ['HK$', ['HKD']],
  ['S$', ['SGD']],
  ['R$', ['BRL']],
  ['NT$', ['TWD']],
  ['MX$', ['MXN']],
  ['CA$', ['CAD']],
  ['C$', ['CAD', 'NIO']],
]);

/**
 * Abbreviations that local exports write beside an amount in place of a symbol (`-1 234,50 kr`,
 * `12,00 zł`, `R 1 234,50`), any case, with the currencies each may mean: a row whose currency is
 * none of them is invalid, as for a symbol.
 */
const LOCAL_ABBREVIATIONS: ReadonlyMap<string, readonly string[]> = new Map([
  ['kr', ['SEK', 'NOK', 'DKK', 'ISK']],
  ['kr.', ['DKK', 'ISK', 'NOK', 'SEK']],
  ['zł', ['PLN']],
  ['kč', ['CZK']],
  ['ft', ['HUF']],
  ['lei', ['RON', 'MDL']],
  ['fr.', ['CHF']],
  ['r', ['ZAR']],
  ['rs', ['INR', 'PKR', 'LKR', 'NPR', 'MUR', 'SCR']],
  ['rs.', ['INR', 'PKR', 'LKR', 'NPR', 'MUR', 'SCR']],
]);

/** Signs of a currency's hundredth (`50¢`): the number is not in the currency's units. */
const SUBUNIT_SIGNS = new Set(['¢', '₥']);

/** ISO 4217 codes that ICU leaves out of its list: fund codes, precious metals, a recent bolívar. */
const ISO_CODES_ICU_OMITS = [
  'BOV',
  'CHE',
  'CHW',
  'CLF',
  'COU',
  'MXV',
  'USN',
  'UYI',
  'UYW',
  'VED',
  'XAG',
  'XAU',
  'XBA',
  'XBB',
  'XBC',
  'XBD',
  'XPD',
  'XPT',
  'XUA',
];

/**
 * The ISO 4217 codes this runtime knows, so that a word beside a number (`12.50 net`, `4.00 VAT`)
 * is not taken for a currency; undefined where the runtime cannot list them (any three letters pass).
 */
const ISO_CURRENCIES: ReadonlySet<string> | undefined = (() => {
  const supportedValuesOf = (Intl as { supportedValuesOf?: (key: 'currency') => string[] }).supportedValuesOf;
  try {
    return supportedValuesOf === undefined
      ? undefined
      : new Set([...supportedValuesOf('currency'), ...ISO_CODES_ICU_OMITS]);
  } catch {
    return undefined;
  }
})();

function isSpace(code: number): boolean {
  return code === SPACE || code === NBSP || code === NARROW_NBSP || code === 9;
}

function isAsciiLetter(code: number): boolean {
  return (code >= 65 && code <= 90) || (code >= 97 && code <= 122);
}

function show(text: string): string {
  return JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text);
}

/** What stands beside a number: the currencies it may mean (none: a sign that names no currency). */
type CurrencyMark = { currencies: readonly string[]; unlisted?: true } | { refused: string };

const ANY_CURRENCY: CurrencyMark = { currencies: [] };

/**
 * What may stand beside the number: an ISO 4217 code (any case), a local abbreviation (`kr`), or
 * a currency symbol, possibly with a letter prefix such as `US$` or `R$`. Undefined when the text
 * is none of these.
 */
function currencyMark(text: string): CurrencyMark | undefined {
  const local = LOCAL_ABBREVIATIONS.get(text.toLowerCase());
  if (local !== undefined) return { currencies: local };
  let letters = 0;
  while (letters < text.length && isAsciiLetter(text.charCodeAt(letters))) letters++;
  if (letters === text.length) {
    if (letters !== 3) return undefined;
    const code = text.toUpperCase();
    if (ISO_CURRENCIES !== undefined && !ISO_CURRENCIES.has(code)) return { currencies: [code], unlisted: true };
    return { currencies: [code] };
  }
  const rest = text.slice(letters);
  if (letters > 2 || !CURRENCY_SYMBOL.test(rest)) return undefined;
  if (SUBUNIT_SIGNS.has(rest))
    return { refused: `${rest} counts hundredths: write the amount in the currency's units` };
  const known = SYMBOL_CURRENCIES.get(text.toUpperCase());
  if (known !== undefined) return { currencies: known };
  // `RD$` is a Dominican peso, not any dollar: stripped like `$`, the row's currency would be stored for it.
  if (letters > 0) {
    return { refused: `${text} names a currency by a prefix this reader does not know: write its ISO code instead` };
  }
  return ANY_CURRENCY;
}

/** The currencies both marks allow: one mark's alone when the other names none; empty when they disagree. */
function bothMarks(first: readonly string[] | undefined, second: readonly string[]): readonly string[] {
  if (first === undefined || first.length === 0) return second;
  if (second.length === 0) return first;
  return first.filter((code) => second.includes(code));
}

/**
 * A reader for one amount format, compiled once. The number itself is read in one pass over its
 * characters; its value is the digits as an integer divided by a power of ten, which is the same
 * correctly rounded double as `Number('42.50')` whenever both are exact (up to 2^53 and 10^22),
 * and `Number` itself otherwise.
 */
export function amountReader(format: AmountFormat): AmountReader {
  const decimal = format.decimal.charCodeAt(0);
  const thousands = format.thousands?.charCodeAt(0);
  const thousandsIsSpace = thousands === SPACE;
  const thousandsIsApostrophe = thousands === APOSTROPHE;
  const isThousands = (code: number) =>
    code === thousands || (thousandsIsSpace && isSpace(code)) || (thousandsIsApostrophe && code === RIGHT_SINGLE_QUOTE);
  const ambiguous = format.decimal === ',' && format.thousands === undefined ? 46 /* . */ : undefined;
  const unexpectedGroup = format.decimal === '.' && format.thousands === undefined ? 44 /* , */ : undefined;
  const success: {
    ok: true;
    value: number;
    currency: string | undefined;
    currencies: readonly string[] | undefined;
    unlisted: boolean;
  } = { ok: true, value: 0, currency: undefined, currencies: undefined, unlisted: false };

  return (raw) => {
    const text = raw.trim();
    if (text === '') return { ok: false, message: 'missing' };
    let start = 0;
    let end = text.length;
    let negative = false;
    if (text.charCodeAt(0) === 40 /* ( */ && text.charCodeAt(end - 1) === 41 /* ) */) {
      negative = true;
      start++;
      end--;
    }
    // Find the number: the first digit (or a decimal separator followed by one), and its end.
    let numberStart = start;
    while (numberStart < end) {
      const code = text.charCodeAt(numberStart);
      if (code >= DIGIT_0 && code <= DIGIT_0 + 9) break;
      if (code === decimal && numberStart + 1 < end) {
        const next = text.charCodeAt(numberStart + 1);
        if (next >= DIGIT_0 && next <= DIGIT_0 + 9) break;
      }
      numberStart++;
    }
    if (numberStart === end) return { ok: false, message: `not an amount: ${show(raw)}` };
    let numberEnd = numberStart;
    while (numberEnd < end) {
      const code = text.charCodeAt(numberEnd);
      const digit = code >= DIGIT_0 && code <= DIGIT_0 + 9;
      if (!digit && code !== decimal && !isThousands(code) && code !== ambiguous && code !== unexpectedGroup) break;
      numberEnd++;
    }
    // A thousands separator that is a space never ends the number, but a trailing one is not part of it.
    while (numberEnd > numberStart && isSpace(text.charCodeAt(numberEnd - 1))) numberEnd--;

    // Before the number: an optional sign and an optional currency mark, in either order.
    let currencies: readonly string[] | undefined;
    let unlisted = false;
    let before = text.slice(start, numberStart).trim();
    let after = text.slice(numberEnd, end).trim();
    let minus = false;
    const first = before[0];
    const last = before[before.length - 1];
    if (first === '-' || first === MINUS_SIGN || first === '+') {
      minus = first !== '+';
      before = before.slice(1).trim();
    } else if (last === '-' || last === MINUS_SIGN || last === '+') {
      minus = last !== '+';
      before = before.slice(0, -1).trim();
    }
    // Accounting brackets inside the currency mark: `$(1,234.56)`, ` $ (1,234.56) ` as a
    // spreadsheet's accounting format shows them, or `(1.234,56) EUR`.
    if (before.endsWith('(') && after.startsWith(')')) {
      if (minus || negative) return { ok: false, message: `two minus signs: ${show(raw)}` };
      negative = true;
      before = before.slice(0, -1).trim();
      after = after.slice(1).trim();
    }
    if (minus && negative) return { ok: false, message: `two minus signs: ${show(raw)}` };
    negative ||= minus;
    if (before !== '') {
      const mark = currencyMark(before);
      if (mark === undefined) return { ok: false, message: `not an amount: ${show(raw)}` };
      if ('refused' in mark) return { ok: false, message: `not an amount: ${show(raw)}: ${mark.refused}` };
      currencies = mark.currencies;
      unlisted = mark.unlisted === true;
    }
    // A sign after the number, as SAP and some ledgers write it: 42.50-
    const trailing = after[0];
    if (trailing === '-' || trailing === MINUS_SIGN || trailing === '+') {
      if (trailing !== '+' && negative) return { ok: false, message: `two minus signs: ${show(raw)}` };
      negative ||= trailing !== '+';
      after = after.slice(1).trim();
    }
    if (after !== '') {
      const mark = currencyMark(after);
      if (mark === undefined) return { ok: false, message: `not an amount: ${show(raw)}` };
      if ('refused' in mark) return { ok: false, message: `not an amount: ${show(raw)}: ${mark.refused}` };
      const both = bothMarks(currencies, mark.currencies);
      if (both.length === 0 && (currencies?.length ?? 0) > 0 && mark.currencies.length > 0) {
        return { ok: false, message: `two currencies in one amount: ${show(raw)}` };
      }
      currencies = both;
      unlisted ||= mark.unlisted === true;
    }

    // The number: digits, thousands separators only between groups of three, one decimal separator.
    let mantissa = 0;
    let fractionDigits = 0;
    let integerDigits = 0;
    let groupDigits = -1; // digits since the last thousands separator; -1 before the first one
    let inFraction = false;
    let significant = 0; // digits from the first non-zero one
    let zerosAtEnd = 0; // of those, the zeros they end with: they add no precision (1000, 2.50)
    for (let i = numberStart; i < numberEnd; i++) {
      const code = text.charCodeAt(i);
      if (code >= DIGIT_0 && code <= DIGIT_0 + 9) {
        mantissa = mantissa * 10 + (code - DIGIT_0);
        if (code !== DIGIT_0) {
          significant++;
          zerosAtEnd = 0;
        } else if (significant > 0) {
          significant++;
          zerosAtEnd++;
        }
        if (inFraction) fractionDigits++;
        else {
          integerDigits++;
          if (groupDigits >= 0) groupDigits++;
        }
        continue;
      }
      if (code === ambiguous) {
        return {
          ok: false,
          message: `ambiguous amount ${show(raw)}: with --decimal , say how thousands are written (--thousands .)`,
        };
      }
      if (code === unexpectedGroup) {
        return {
          ok: false,
          message: `not an amount: ${show(raw)} has a "," (with thousands separators, pass --thousands ,; with a decimal comma, --decimal ,)`,
        };
      }
      if (code === decimal) {
        if (inFraction) return { ok: false, message: `not an amount: ${show(raw)}` };
        if (groupDigits >= 0 && groupDigits !== 3)
          return { ok: false, message: `misplaced thousands separator in ${show(raw)}` };
        inFraction = true;
        continue;
      }
      // A thousands separator: after 1 to 3 leading digits or a full group, never in the fraction.
      if (inFraction || integerDigits === 0 || (groupDigits >= 0 ? groupDigits !== 3 : integerDigits > 3)) {
        return { ok: false, message: `misplaced thousands separator in ${show(raw)}` };
      }
      groupDigits = 0;
    }
    if (!inFraction && groupDigits >= 0 && groupDigits !== 3) {
      return { ok: false, message: `misplaced thousands separator in ${show(raw)}` };
    }
    if (inFraction && fractionDigits === 0) {
      return { ok: false, message: `not an amount: ${show(raw)}` };
    }
    // A double holds any 15 significant decimal digits exactly, not always 16: beyond that the
    // amount stored would be another amount, rounded without a word.
    if (significant - zerosAtEnd > MAX_SIGNIFICANT_DIGITS) {
      return {
        ok: false,
        message: `more digits than can be stored exactly: ${show(raw)} (at most ${MAX_SIGNIFICANT_DIGITS} significant digits)`,
      };
    }
    let value: number;
    if (mantissa <= Number.MAX_SAFE_INTEGER && fractionDigits < POWERS.length) {
      value = mantissa / (POWERS[fractionDigits] as number);
    } else {
      let digits = '';
      for (let i = numberStart; i < numberEnd; i++) {
        const code = text.charCodeAt(i);
        if (code >= DIGIT_0 && code <= DIGIT_0 + 9) digits += text[i];
        else if (code === decimal) digits += '.';
      }
      value = Number(digits);
      if (!Number.isFinite(value)) return { ok: false, message: `not a finite amount: ${show(raw)}` };
    }
    // -0 would be sent as 0 anyway; keep the record as it is sent.
    success.value = negative && value !== 0 ? -value : value;
    success.currency = currencies?.length === 1 ? currencies[0] : undefined;
    success.currencies = currencies !== undefined && currencies.length > 1 ? currencies : undefined;
    success.unlisted = unlisted;
    return success;
  };
}
