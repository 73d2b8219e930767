/**
 * ISO 4217 currency codes and the digits of their minor unit.
 *
 * Source: ISO 4217 List One ("Current currency & funds code list"), as published by SIX
 * Financial Information AG, the ISO 4217 maintenance agency, edition of 2024-06-25
 * (`<ISO_4217 Pblshd="2024-06-25">`), one row per code, plus one later amendment: XCG
 * (Caribbean Guilder, 2 digits, in circulation since 2025-03-31). Codes whose minor unit the
 * list gives as "N.A." (XAU, XAG, XPD, XPT, XBA-XBD, XDR, XSU, XUA, XTS, XXX) are left out:
 * nothing can be billed in them in integer minor units. See docs/adr/0013-billing-pricing-and-periods.md.
 * Keys are lower case, as currencies are written on the wire.
 */
export const ISO_4217_MINOR_DIGITS: Readonly<Record<string, number>> = Object.freeze({
  aed: 2, // UAE Dirham
  afn: 2, // Afghani
  all: 2, // Lek
  amd: 2, // Armenian Dram
  ang: 2, // Netherlands Antillean Guilder
  aoa: 2, // Kwanza
  ars: 2, // Argentine Peso
  aud: 2, // Australian Dollar
  awg: 2, // Aruban Florin
  azn: 2, // Azerbaijan Manat
  bam: 2, // Convertible Mark
  bbd: 2, // Barbados Dollar
  bdt: 2, // Taka
  bgn: 2, // Bulgarian Lev
  bhd: 3, // Bahraini Dinar
  bif: 0, // Burundi Franc
  bmd: 2, // Bermudian Dollar
  bnd: 2, // Brunei Dollar
  bob: 2, // Boliviano
  bov: 2, // Mvdol
  brl: 2, // Brazilian Real
  bsd: 2, // Bahamian Dollar
  btn: 2, // Ngultrum
  bwp: 2, // Pula
  byn: 2, // Belarusian Ruble
  bzd: 2, // Belize Dollar
  cad: 2, // Canadian Dollar
  cdf: 2, // Congolese Franc
  che: 2, // WIR Euro
  chf: 2, // Swiss Franc
  chw: 2, // WIR Franc
  clf: 4, // Unidad de Fomento
  clp: 0, // Chilean Peso
  cny: 2, // Yuan Renminbi
  cop: 2, // Colombian Peso
  cou: 2, // Unidad de Valor Real
  crc: 2, // Costa Rican Colon
  cuc: 2, // Peso Convertible
  cup: 2, // Cuban Peso
  cve: 2, // Cabo Verde Escudo
  czk: 2, // Czech Koruna
  djf: 0, // Djibouti Franc
  dkk: 2, // Danish Krone
  dop: 2, // Dominican Peso
  dzd: 2, // Algerian Dinar
  egp: 2, // Egyptian Pound
  ern: 2, // Nakfa
  etb: 2, // Ethiopian Birr
  eur: 2, // Euro
  fjd: 2, // Fiji Dollar
  fkp: 2, // Falkland Islands Pound
  gbp: 2, // Pound Sterling
  gel: 2, // Lari
  ghs: 2, // Ghana Cedi
  gip: 2, // Gibraltar Pound
  gmd: 2, // Dalasi
  gnf: 0, // Guinean Franc
  gtq: 2, // Quetzal
  gyd: 2, // Guyana Dollar
  hkd: 2, // Hong Kong Dollar
  hnl: 2, // Lempira
  htg: 2, // Gourde
  huf: 2, // Forint
  idr: 2, // Rupiah
  ils: 2, // New Israeli Sheqel
  inr: 2, // Indian Rupee
  iqd: 3, // Iraqi Dinar
  irr: 2, // Iranian Rial
  isk: 0, // Iceland Krona
  jmd: 2, // Jamaican Dollar
  jod: 3, // Jordanian Dinar
  jpy: 0, // Yen
  kes: 2, // Kenyan Shilling
  kgs: 2, // Som
  khr: 2, // Riel
  kmf: 0, // Comorian Franc
  kpw: 2, // North Korean Won
  krw: 0, // Won
  kwd: 3, // Kuwaiti Dinar
  kyd: 2, // Cayman Islands Dollar
  kzt: 2, // Tenge
  lak: 2, // Lao Kip
  lbp: 2, // Lebanese Pound
  lkr: 2, // Sri Lanka Rupee
  lrd: 2, // Liberian Dollar
  lsl: 2, // Loti
  lyd: 3, // Libyan Dinar
  mad: 2, // Moroccan Dirham
  mdl: 2, // Moldovan Leu
  mga: 2, // Malagasy Ariary
  mkd: 2, // Denar
  mmk: 2, // Kyat
  mnt: 2, // Tugrik
  mop: 2, // Pataca
  mru: 2, // Ouguiya
  mur: 2, // Mauritius Rupee
  mvr: 2, // Rufiyaa
  mwk: 2, // Malawi Kwacha
  mxn: 2, // Mexican Peso
  mxv: 2, // Mexican Unidad de Inversion (UDI)
  myr: 2, // Malaysian Ringgit
  mzn: 2, // Mozambique Metical
  nad: 2, // Namibia Dollar
  ngn: 2, // Naira
  nio: 2, // Cordoba Oro
  nok: 2, // Norwegian Krone
  npr: 2, // Nepalese Rupee
  nzd: 2, // New Zealand Dollar
  omr: 3, // Rial Omani
  pab: 2, // Balboa
  pen: 2, // Sol
  pgk: 2, // Kina
  php: 2, // Philippine Peso
  pkr: 2, // Pakistan Rupee
  pln: 2, // Zloty
  pyg: 0, // Guarani
  qar: 2, // Qatari Rial
  ron: 2, // Romanian Leu
  rsd: 2, // Serbian Dinar
  rub: 2, // Russian Ruble
  rwf: 0, // Rwanda Franc
  sar: 2, // Saudi Riyal
  sbd: 2, // Solomon Islands Dollar
  scr: 2, // Seychelles Rupee
  sdg: 2, // Sudanese Pound
  sek: 2, // Swedish Krona
  sgd: 2, // Singapore Dollar
  shp: 2, // Saint Helena Pound
  sle: 2, // Leone
  sos: 2, // Somali Shilling
  srd: 2, // Surinam Dollar
  ssp: 2, // South Sudanese Pound
  stn: 2, // Dobra
  svc: 2, // El Salvador Colon
  syp: 2, // Syrian Pound
  szl: 2, // Lilangeni
  thb: 2, // Baht
  tjs: 2, // Somoni
  tmt: 2, // Turkmenistan New Manat
  tnd: 3, // Tunisian Dinar
  top: 2, // Pa’anga
  try: 2, // Turkish Lira
  ttd: 2, // Trinidad and Tobago Dollar
  twd: 2, // New Taiwan Dollar
  tzs: 2, // Tanzanian Shilling
  uah: 2, // Hryvnia
  ugx: 0, // Uganda Shilling
  usd: 2, // US Dollar
  usn: 2, // US Dollar (Next day)
  uyi: 0, // Uruguay Peso en Unidades Indexadas (UI)
  uyu: 2, // Peso Uruguayo
  uyw: 4, // Unidad Previsional
  uzs: 2, // Uzbekistan Sum
  ved: 2, // Bolívar Soberano
  ves: 2, // Bolívar Soberano
  vnd: 0, // Dong
  vuv: 0, // Vatu
  wst: 2, // Tala
  xaf: 0, // CFA Franc BEAC
  xcd: 2, // East Caribbean Dollar
  xcg: 2, // Caribbean Guilder
  xof: 0, // CFA Franc BCEAO
  xpf: 0, // CFP Franc
  yer: 2, // Yemeni Rial
  zar: 2, // Rand
  zmw: 2, // Zambian Kwacha
  zwg: 2, // Zimbabwe Gold
});
