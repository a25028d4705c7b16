"""Chinese (Simplified): 发票号码, 开票日期, 价税合计, 金额, 税额, 合计 of a VAT invoice (增值税发票).

OCR reads Chinese with a space now and then between the characters of a label ("开 票日期"), so
each label allows one space between its characters. Each label starts at a word's start (``\b``),
as every other language's does: an alternative that may start anywhere made the assembled patterns
40 % slower on a page of hostile text. A Chinese VAT invoice's totals row (合计) gives the amount
before tax and the tax; the total with tax is 价税合计, printed in words (大写) and in figures
(小写) on one line.
"""

# Where its labels stand among every language's (``agent.reading.languages``): an earlier one's wins a tie.
ORDER = 14

INVOICE_NUMBER = [r"\b发\s?票\s?号\s?码", r"\b票\s?号\s?码"]
INVOICE_DATE = [r"\b开\s?票\s?日\s?期"]
DUE_DATE = [r"\b付\s?款\s?期\s?限", r"\b到\s?期\s?日"]
OTHER_DATE = [r"\b通\s?行", r"\b交\s?货", r"\b订\s?单", r"\b发\s?货", r"\b服\s?务\s?期"]
TOTAL_GROSS = [r"\b价\s?税\s?合\s?计", r"\b小\s?写\s?[)\uff09]"]
TOTAL_DUE = [r"\b应\s?付\s?金\s?额", r"\b应\s?付\s?款"]
NOT_TOTAL = [r"\b税\s?额", r"\b税\s?率", r"\b小\s?计", r"\b折\s?扣", r"\b已\s?付", r"\b找\s?零"]
# The totals row of the goods table (合计 alone): its first amount is before tax (the tax is in its own column).
NET = [r"\b合\s{0,8}计", r"\b不\s?含\s?税\s?金\s?额"]
VAT_AMOUNT = [r"\b税\s?额"]
DEPOSIT = [r"\b已\s?付(?:\s?款)?", r"\b预\s?付\s?款"]
CURRENCY = ["币种"]

MONTHS = {1: "一月", 2: "二月", 3: "三月", 4: "四月", 5: "五月", 6: "六月", 7: "七月", 8: "八月", 9: "九月",
          10: "十月", 11: "十一月", 12: "十二月"}

# Who is who: the seller's (销售方) and the buyer's (购买方) block headings; printed down the block's side, one
# character starts each of its lines.
SELLER = [r"销\s?售\s?方", r"销(?!\w)"]
BUYER_HEADING = [r"购\s?买\s?方", r"购(?!\w)"]

# A heading's second word, and a name's label: "名称" (name).
HEADING_END = [r"名\s*称"]
NAME_LABEL = [r"名\s*称"]
