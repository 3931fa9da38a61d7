// The Lua 5.4 scanner: turns source bytes into tokens, with Lua's lexical conventions
// and error messages ("malformed number near '3x'").
//
// Invariants:
//  1. Errors unwind with SyntaxError (internal to the frontend; compile() catches it).
//     Messages are "chunkid:line: message near token" exactly as Lua formats them.
//  2. Every string the scanner returns (names, string literals) is interned in the
//     Lexer and lives as long as it: string_views into it stay valid for a compile.
//  3. lastLine() is the line of the last token consumed; the code generator tags each
//     instruction with it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_set>

namespace weft::frontend {

// Thrown by the frontend internally and caught at compile(); never escapes the API.
struct SyntaxError {
  std::string message;
};

// Single-byte tokens are their own character code; the others follow.
enum Token : int {
  kTkFirstReserved = 257,
  kTkAnd = kTkFirstReserved, kTkBreak, kTkDo, kTkElse, kTkElseif, kTkEnd, kTkFalse, kTkFor,
  kTkFunction, kTkGoto, kTkIf, kTkIn, kTkLocal, kTkNil, kTkNot, kTkOr, kTkRepeat, kTkReturn,
  kTkThen, kTkTrue, kTkUntil, kTkWhile,
  kTkIDiv, kTkConcat, kTkDots, kTkEq, kTkGe, kTkLe, kTkNe, kTkShl, kTkShr, kTkDbColon,
  kTkEos, kTkFloat, kTkInt, kTkName, kTkString,
};

struct TokenInfo {
  int token = kTkEos;
  int64_t integer = 0;
  double number = 0;
  std::string_view text;  // name or string contents (interned)
  std::string raw;        // the source text as Lua shows it in "near ..." messages
};

class Lexer {
 public:
  Lexer(std::string_view source, std::string chunkId);

  void next();
  int lookahead();
  const TokenInfo& current() const { return current_; }
  int token() const { return current_.token; }
  int line() const { return line_; }
  int lastLine() const { return lastLine_; }
  const std::string& chunkId() const { return chunkId_; }

  [[noreturn]] void syntaxError(std::string_view msg) const;    // "... near <token>"
  [[noreturn]] void semanticError(std::string_view msg) const;  // no "near" part
  std::string_view intern(std::string_view s);
  static std::string tokenToString(int token);

 private:
  [[noreturn]] void lexError(std::string_view msg, int token) const;
  std::string nearText(int token) const;
  int peekChar() const { return pos_ < src_.size() ? static_cast<unsigned char>(src_[pos_]) : -1; }
  void advance() { ++pos_; }
  void saveAndAdvance();
  bool currentIsNewline() const { int c = peekChar(); return c == '\n' || c == '\r'; }
  bool checkNext1(int c);
  bool checkNext2(const char* set);
  void incLineNumber();
  int scan(TokenInfo& tok);
  void skipComment();
  size_t skipSeparator();
  void readLongString(TokenInfo* tok, size_t sep);
  void readString(int delimiter, TokenInfo& tok);
  void readEscape();
  int readHexEscape();
  int hexDigit();
  void readUtf8Escape();
  int readDecimalEscape();
  void escapeCheck(bool ok, std::string_view msg);
  int readNumeral(TokenInfo& tok);
  int readName(TokenInfo& tok);

  std::string_view src_;
  size_t pos_ = 0;
  int line_ = 1;
  int lastLine_ = 1;
  std::string chunkId_;
  std::string buffer_;  // text of the token being scanned, as Lua's lexer buffer holds it
  TokenInfo current_;
  TokenInfo ahead_;
  std::unordered_set<std::string> strings_;
};

}  // namespace weft::frontend
