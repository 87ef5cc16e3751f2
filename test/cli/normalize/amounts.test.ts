import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type AmountFormat, amountReader } from '../../../src/cli/normalize/amounts.js';

const read = (format: Partial<AmountFormat>, text: string) => {
  const reading = amountReader({ decimal: '.', thousands: undefined, ...format })(text);
  return reading.ok ? [reading.value, reading.currency] : reading.message;
};
const currenciesOf = (text: string) => {
  const reading = amountReader({ decimal: '.', thousands: undefined })(text);
  return reading.ok ? reading.currencies : reading.message;
};

describe('amountReader', () => {
  it('reads plain amounts by default, and refuses a comma it was not told about', () => {
    expect(read({}, '42.50')).toEqual([42.5, undefined]);
    expect(read({}, ' -7 ')).toEqual([-7, undefined]);
    expect(read({}, '.5')).toEqual([0.5, undefined]);
    expect(read({}, '1,234.50')).toMatch(/--thousands ,/);
    expect(read({}, '42,50')).toMatch(/--decimal ,/);
  });

  it('reads decimal commas and every thousands separator', () => {
    expect(read({ decimal: ',' }, '42,50')).toEqual([42.5, undefined]);
    expect(read({ decimal: ',', thousands: '.' }, '1.234,50')).toEqual([1234.5, undefined]);
    expect(read({ thousands: ',' }, '1,234,567.89')).toEqual([1234567.89, undefined]);
    expect(read({ decimal: ',', thousands: ' ' }, '1 234,50')).toEqual([1234.5, undefined]);
    expect(read({ decimal: ',', thousands: ' ' }, '1\u00a0234,50')).toEqual([1234.5, undefined]);
    expect(read({ decimal: ',', thousands: ' ' }, '1\u202f234,50')).toEqual([1234.5, undefined]);
    expect(read({ thousands: "'" }, "1'234.50")).toEqual([1234.5, undefined]);
    expect(read({ thousands: "'" }, '1\u2019234\u2019567.50')).toEqual([1234567.5, undefined]);
    expect(read({ thousands: ',' }, '1\u2019234.50')).toMatch(/not an amount/);
    expect(read({ thousands: ',' }, '999')).toEqual([999, undefined]);
  });

  it('refuses separators in the wrong place', () => {
    expect(read({ thousands: ',' }, '1,23.50')).toMatch(/thousands/);
    expect(read({ thousands: ',' }, '1234,567')).toMatch(/thousands/);
    expect(read({ thousands: ',' }, '1,234.5,6')).not.toEqual(expect.any(Array));
    expect(read({}, '1.2.3')).toMatch(/not an amount/);
    expect(read({}, '42.')).toMatch(/not an amount/);
    expect(read({ decimal: ',', thousands: '.' }, '1.23,5')).toMatch(/thousands/);
  });

  it('calls a dot ambiguous with --decimal , and no --thousands', () => {
    expect(read({ decimal: ',' }, '1.234,50')).toMatch(/ambiguous/);
    expect(read({ decimal: ',' }, '4.00')).toMatch(/ambiguous/);
  });

  it('strips currency symbols before or after, and takes ISO codes in any case', () => {
    expect(read({}, '$4.00')).toEqual([4, undefined]);
    expect(read({}, '4.00 EUR')).toEqual([4, 'EUR']);
    expect(read({}, 'usd 4.00')).toEqual([4, 'USD']);
    expect(read({}, '$4.00 USD')).toEqual([4, 'USD']);
    expect(read({}, 'EUR 4.00 USD')).toMatch(/two currencies/);
    expect(read({}, '4.00 EURO')).toMatch(/not an amount/);
    expect(read({}, '4.00 abc def')).toMatch(/not an amount/);
  });

  it('reads a symbol that stands for one currency as its code, and one that stands for a few as those', () => {
    expect(read({ decimal: ',' }, '€ 4,00')).toEqual([4, 'EUR']);
    expect(read({ decimal: ',' }, '4,00 €')).toEqual([4, 'EUR']);
    expect(read({}, 'US$4.00')).toEqual([4, 'USD']);
    expect(read({}, 'R$ 4.00')).toEqual([4, 'BRL']);
    expect(read({}, '₹12')).toEqual([12, 'INR']);
    expect(currenciesOf('£12')).toEqual(expect.arrayContaining(['GBP', 'EGP']));
    expect(currenciesOf('¥500')).toEqual(['JPY', 'CNY']);
    expect(read({}, '¥500 JPY')).toEqual([500, 'JPY']);
    expect(read({}, '€5 USD')).toMatch(/two currencies/);
    expect(read({}, '£7 EUR')).toMatch(/two currencies/);
    // A sign that names no currency says nothing either way.
    expect(read({}, '$4.00 CAD')).toEqual([4, 'CAD']);
    // A letter before `$` names a dollar: C$ is Canada's (or Nicaragua's córdoba); one not known is refused.
    expect(currenciesOf('C$12.00')).toEqual(['CAD', 'NIO']);
    expect(read({}, 'C$12.00 CAD')).toEqual([12, 'CAD']);
    expect(read({}, 'RD$12.00')).toMatch(/not an amount: "RD\$12\.00": RD\$ names a currency by a prefix/);
    expect(read({}, '12.00 J$')).toMatch(/J\$ names a currency by a prefix/);
  });

  it('reads local abbreviations (kr, zł, Kč, Ft, lei, Fr., R, Rs) as the currencies they may mean', () => {
    const nordic = amountReader({ decimal: ',', thousands: ' ' });
    const reading = nordic('-1 234,50 kr');
    expect(reading.ok && [reading.value, reading.currencies]).toEqual([-1234.5, ['SEK', 'NOK', 'DKK', 'ISK']]);
    expect(read({ decimal: ',' }, '12,00 zł')).toEqual([12, 'PLN']);
    expect(read({ decimal: ',' }, '12,00 Kč')).toEqual([12, 'CZK']);
    expect(read({ decimal: ',' }, '1500 Ft')).toEqual([1500, 'HUF']);
    expect(read({}, 'Fr. 12.50')).toEqual([12.5, 'CHF']);
    expect(read({}, 'R 99.95')).toEqual([99.95, 'ZAR']);
    expect(currenciesOf('Rs. 1500')).toEqual(['INR', 'PKR', 'LKR', 'NPR', 'MUR', 'SCR']);
    expect(currenciesOf('12 LEI')).toEqual(['RON', 'MDL']);
    // Not an abbreviation: still refused as a word beside the number.
    expect(read({}, '12 krona')).toMatch(/^not an amount/);
  });

  it('refuses hundredths (¢), and marks a word beside the number that is no ISO 4217 code', () => {
    expect(read({}, '50¢')).toMatch(/not an amount.*hundredths/);
    expect(read({}, '¢50')).toMatch(/hundredths/);
    const unlisted = (text: string) => {
      const reading = amountReader({ decimal: '.', thousands: undefined })(text);
      return reading.ok ? [reading.currency, reading.unlisted] : reading.message;
    };
    for (const word of ['net', 'VAT', 'Tax', 'BTC']) {
      expect(unlisted(`12.50 ${word}`)).toEqual([word.toUpperCase(), true]);
      expect(unlisted(`${word} 12.50`)).toEqual([word.toUpperCase(), true]);
    }
    expect(unlisted('12.50 chf')).toEqual(['CHF', false]);
    expect(unlisted('CLF 12.50')).toEqual(['CLF', false]);
    expect(unlisted('￥500 JPY')).toEqual(['JPY', false]);
    expect(unlisted('￥500 USD')).toMatch(/two currencies/);
  });

  it('reads accounting negatives and signs combined with symbols', () => {
    expect(read({}, '(42.50)')).toEqual([-42.5, undefined]);
    expect(read({ thousands: ',' }, '($1,000.00)')).toEqual([-1000, undefined]);
    expect(read({}, '-$42.50')).toEqual([-42.5, undefined]);
    expect(read({}, '$-42.50')).toEqual([-42.5, undefined]);
    expect(read({ decimal: ',', thousands: '.' }, '-1.234,50 EUR')).toEqual([-1234.5, 'EUR']);
    expect(read({}, '(-42.50)')).toMatch(/two minus signs/);
    expect(read({}, '(0.00)')).toEqual([0, undefined]);
    expect(read({ decimal: ',', thousands: '.' }, '1.234,50-')).toEqual([-1234.5, undefined]);
    expect(read({}, '42.50- EUR')).toEqual([-42.5, 'EUR']);
    expect(read({}, '-42.50-')).toMatch(/two minus signs/);
    // U+2212, the typographic minus, counts as one.
    expect(read({}, '\u221242.50')).toEqual([-42.5, undefined]);
    expect(read({}, '42.50\u2212')).toEqual([-42.5, undefined]);
    expect(read({}, '\u2212€42.50')).toEqual([-42.5, 'EUR']);
    expect(read({}, '(\u221242.50)')).toMatch(/two minus signs/);
    // Brackets inside the currency mark, as a spreadsheet's accounting format shows them.
    expect(read({ thousands: ',' }, '$(1,000.00)')).toEqual([-1000, undefined]);
    expect(read({ thousands: ',' }, ' $ (1,000.00) ')).toEqual([-1000, undefined]);
    expect(read({ decimal: ',', thousands: '.' }, '(1.234,50) EUR')).toEqual([-1234.5, 'EUR']);
    expect(read({}, '-$(1.00)')).toMatch(/two minus signs/);
    expect(read({}, '$(1.00)-')).toMatch(/two minus signs/);
    expect(read({}, '$(1.00')).toMatch(/not an amount/);
  });

  it('says "missing" for an empty amount', () => {
    expect(read({}, '   ')).toBe('missing');
  });

  it('gives the same number as Number() for any decimal written with separators', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 15n }), fc.integer({ min: 0, max: 6 }), (units, scale) => {
        const digits = units.toString().padStart(scale + 1, '0');
        const integer = digits.slice(0, digits.length - scale);
        const fraction = digits.slice(digits.length - scale);
        const plain = scale > 0 ? `${integer}.${fraction}` : integer;
        const grouped = integer.replace(/\B(?=(\d{3})+(?!\d))/g, '.');
        const european = scale > 0 ? `${grouped},${fraction}` : grouped;
        expect(read({ decimal: ',', thousands: '.' }, european)).toEqual([Number(plain), undefined]);
      }),
      { numRuns: 500 },
    );
  });
});
