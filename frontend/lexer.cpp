// The scanner. It keeps a text buffer of the current token shaped like Lua's (escapes
// already decoded, delimiters kept) because error messages quote that buffer.
#include "frontend/lexer.h"

#include <climits>
#include <cstdio>

#include "frontend/numparse.h"

namespace weft::frontend {
namespace {

constexpr const char* kTokenNames[] = {
    "and", "break", "do", "else", "elseif", "end", "false", "for", "function", "goto", "if", "in",
    "local", "nil", "not", "or", "repeat", "return", "then", "true", "until", "while", "//", "..",
    "...", "==", ">=", "<=", "~=", "<<", ">>", "::", "<eof>", "<number>", "<integer>", "<name>",
    "<string>"};
constexpr int kNumReserved = kTkWhile - kTkFirstReserved + 1;

bool isPrintable(int c) { return c >= 32 && c < 127; }

// Lua's extended UTF-8 (up to 6 bytes, values below 2^31).
void appendUtf8(std::string& out, uint32_t x) {
  if (x < 0x80) {
    out.push_back(static_cast<char>(x));
    return;
  }
  char buf[8];
  int n = 1;
  uint32_t firstMax = 0x3f;  // largest value that fits in the first byte
  do {
    buf[8 - n++] = static_cast<char>(0x80 | (x & 0x3f));
    x >>= 6;
    firstMax >>= 1;
  } while (x > firstMax);
  buf[8 - n] = static_cast<char>((~firstMax << 1) | x);
  out.append(buf + 8 - n, static_cast<size_t>(n));
}

}  // namespace

Lexer::Lexer(std::string_view source, std::string chunkId)
    : src_(source), chunkId_(std::move(chunkId)) {}

std::string_view Lexer::intern(std::string_view s) { return *strings_.emplace(s).first; }

std::string Lexer::tokenToString(int token) {
  if (token < kTkFirstReserved) {
    char buf[24];
    if (isPrintable(token)) std::snprintf(buf, sizeof buf, "'%c'", token);
    else std::snprintf(buf, sizeof buf, "'<\\%d>'", token);
    return buf;
  }
  std::string s = kTokenNames[token - kTkFirstReserved];
  if (token < kTkEos) return "'" + s + "'";
  return s;
}

// Lua formats the token text with "%s", so it stops at an embedded NUL.
static std::string quoted(const std::string& text) {
  return "'" + text.substr(0, text.find('\0')) + "'";
}

std::string Lexer::nearText(int token) const {
  switch (token) {
    case kTkName: case kTkString: case kTkFloat: case kTkInt:
      return quoted(buffer_);
    default:
      return tokenToString(token);
  }
}

void Lexer::lexError(std::string_view msg, int token) const {
  std::string full = chunkId_ + ":" + std::to_string(line_) + ": " + std::string(msg);
  if (token) full += " near " + nearText(token);
  throw SyntaxError{std::move(full)};
}

void Lexer::syntaxError(std::string_view msg) const {
  // The buffer may belong to a lookahead token; Lua quotes the current token's text.
  std::string full = chunkId_ + ":" + std::to_string(line_) + ": " + std::string(msg);
  int t = current_.token;
  bool hasText = t == kTkName || t == kTkString || t == kTkFloat || t == kTkInt;
  if (t != 0) full += " near " + (hasText ? quoted(current_.raw) : tokenToString(t));  // a NUL byte token prints nothing, as in Lua
  throw SyntaxError{std::move(full)};
}

void Lexer::semanticError(std::string_view msg) const { lexError(msg, 0); }

void Lexer::next() {
  lastLine_ = line_;
  if (ahead_.token != kTkEos) {
    current_ = std::move(ahead_);
    ahead_ = TokenInfo{};
  } else {
    current_ = TokenInfo{};
    current_.token = scan(current_);
  }
}

int Lexer::lookahead() {
  ahead_ = TokenInfo{};
  ahead_.token = scan(ahead_);
  return ahead_.token;
}

void Lexer::saveAndAdvance() {
  buffer_.push_back(src_[pos_]);
  ++pos_;
}

bool Lexer::checkNext1(int c) {
  if (peekChar() != c) return false;
  advance();
  return true;
}

bool Lexer::checkNext2(const char* set) {
  int c = peekChar();
  if (c != set[0] && c != set[1]) return false;
  saveAndAdvance();
  return true;
}

void Lexer::incLineNumber() {
  int old = peekChar();
  advance();
  if (currentIsNewline() && peekChar() != old) advance();
  if (++line_ >= INT_MAX) lexError("chunk has too many lines", 0);
}

// '[' or ']' followed by '='s: the level plus 2 for a well-formed bracket, 1 for a
// lone bracket, 0 for an unfinished one.
size_t Lexer::skipSeparator() {
  int s = peekChar();
  saveAndAdvance();
  size_t count = 0;
  while (peekChar() == '=') {
    saveAndAdvance();
    ++count;
  }
  if (peekChar() == s) return count + 2;
  return count == 0 ? 1 : 0;
}

void Lexer::readLongString(TokenInfo* tok, size_t sep) {
  int startLine = line_;
  saveAndAdvance();  // second '['
  if (currentIsNewline()) incLineNumber();
  for (;;) {
    int c = peekChar();
    if (c == -1) {
      std::string msg = std::string("unfinished long ") + (tok ? "string" : "comment") +
                        " (starting at line " + std::to_string(startLine) + ")";
      lexError(msg, kTkEos);
    } else if (c == ']') {
      if (skipSeparator() == sep) {
        saveAndAdvance();
        break;
      }
    } else if (c == '\n' || c == '\r') {
      buffer_.push_back('\n');
      incLineNumber();
      if (!tok) buffer_.clear();
    } else if (tok) {
      saveAndAdvance();
    } else {
      advance();
    }
  }
  if (tok) {
    tok->text = intern(std::string_view(buffer_).substr(sep, buffer_.size() - 2 * sep));
  }
}

void Lexer::escapeCheck(bool ok, std::string_view msg) {
  if (ok) return;
  if (peekChar() != -1) saveAndAdvance();  // show the offending character
  lexError(msg, kTkString);
}

int Lexer::hexDigit() {
  saveAndAdvance();
  escapeCheck(isLuaXDigit(peekChar()), "hexadecimal digit expected");
  return hexValue(peekChar());
}

int Lexer::readHexEscape() {
  int r = hexDigit();
  r = (r << 4) + hexDigit();
  buffer_.resize(buffer_.size() - 2);
  return r;
}

void Lexer::readUtf8Escape() {
  size_t removed = 4;  // '\', 'u', '{' and the first digit
  saveAndAdvance();    // 'u'
  escapeCheck(peekChar() == '{', "missing '{'");
  uint32_t r = static_cast<uint32_t>(hexDigit());
  for (;;) {
    saveAndAdvance();
    if (!isLuaXDigit(peekChar())) break;
    ++removed;
    escapeCheck(r <= (0x7FFFFFFFu >> 4), "UTF-8 value too large");
    r = (r << 4) + static_cast<uint32_t>(hexValue(peekChar()));
  }
  escapeCheck(peekChar() == '}', "missing '}'");
  advance();
  buffer_.resize(buffer_.size() - removed);
  appendUtf8(buffer_, r);
}

int Lexer::readDecimalEscape() {
  int r = 0;
  int i = 0;
  for (; i < 3 && isLuaDigit(peekChar()); ++i) {
    r = 10 * r + peekChar() - '0';
    saveAndAdvance();
  }
  escapeCheck(r <= UCHAR_MAX, "decimal escape too large");
  buffer_.resize(buffer_.size() - static_cast<size_t>(i));
  return r;
}

// Called with the backslash current; leaves the decoded bytes in the buffer.
void Lexer::readEscape() {
  saveAndAdvance();  // keep '\' for error messages
  int c = peekChar();
  int value = 0;
  bool consume = true;
  switch (c) {
    case 'a': value = '\a'; break;
    case 'b': value = '\b'; break;
    case 'f': value = '\f'; break;
    case 'n': value = '\n'; break;
    case 'r': value = '\r'; break;
    case 't': value = '\t'; break;
    case 'v': value = '\v'; break;
    case '\\': case '"': case '\'': value = c; break;
    case 'x': value = readHexEscape(); break;
    case 'u': readUtf8Escape(); return;
    case -1: return;  // the string loop reports the unfinished string
    case '\n': case '\r':
      incLineNumber();
      value = '\n';
      consume = false;
      break;
    case 'z':
      buffer_.pop_back();
      advance();
      while (isLuaSpace(peekChar())) {
        if (currentIsNewline()) incLineNumber();
        else advance();
      }
      return;
    default:
      escapeCheck(isLuaDigit(c), "invalid escape sequence");
      value = readDecimalEscape();
      consume = false;
      break;
  }
  if (consume) advance();
  buffer_.pop_back();  // the '\'
  buffer_.push_back(static_cast<char>(value));
}

void Lexer::readString(int delimiter, TokenInfo& tok) {
  saveAndAdvance();
  while (peekChar() != delimiter) {
    int c = peekChar();
    if (c == -1) lexError("unfinished string", kTkEos);
    if (c == '\n' || c == '\r') lexError("unfinished string", kTkString);
    if (c == '\\') readEscape();
    else saveAndAdvance();
  }
  saveAndAdvance();
  tok.text = intern(std::string_view(buffer_).substr(1, buffer_.size() - 2));
}

int Lexer::readNumeral(TokenInfo& tok) {
  const char* expo = "Ee";
  int first = peekChar();
  saveAndAdvance();
  if (first == '0' && checkNext2("xX")) expo = "Pp";
  for (;;) {
    if (checkNext2(expo)) {
      checkNext2("-+");
    } else if (isLuaXDigit(peekChar()) || peekChar() == '.') {
      saveAndAdvance();
    } else {
      break;
    }
  }
  if (isLuaAlpha(peekChar())) saveAndAdvance();  // a numeral touching a letter is malformed
  NumberValue v = parseNumber(buffer_);
  if (v.isNone()) lexError("malformed number", kTkFloat);
  if (v.isInteger()) {
    tok.integer = v.integer;
    return kTkInt;
  }
  tok.number = v.number;
  return kTkFloat;
}

int Lexer::readName(TokenInfo& tok) {
  do {
    saveAndAdvance();
  } while (isLuaAlnum(peekChar()));
  for (int i = 0; i < kNumReserved; ++i) {
    if (buffer_ == kTokenNames[i]) return kTkFirstReserved + i;
  }
  tok.text = intern(buffer_);
  return kTkName;
}

void Lexer::skipComment() {
  if (peekChar() == '[') {
    size_t sep = skipSeparator();
    buffer_.clear();
    if (sep >= 2) {
      readLongString(nullptr, sep);
      buffer_.clear();
      return;
    }
  }
  while (!currentIsNewline() && peekChar() != -1) advance();
}

int Lexer::scan(TokenInfo& tok) {
  buffer_.clear();
  int result = 0;
  for (;;) {
    int c = peekChar();
    switch (c) {
      case '\n': case '\r': incLineNumber(); continue;
      case ' ': case '\f': case '\t': case '\v': advance(); continue;
      case '-':
        advance();
        if (peekChar() != '-') return '-';
        advance();
        skipComment();
        continue;
      case '[': {
        size_t sep = skipSeparator();
        if (sep >= 2) {
          readLongString(&tok, sep);
          result = kTkString;
        } else if (sep == 0) {
          lexError("invalid long string delimiter", kTkString);
        } else {
          return '[';
        }
        break;
      }
      case '=': advance(); return checkNext1('=') ? int(kTkEq) : '=';
      case '<': advance(); return checkNext1('=') ? int(kTkLe) : checkNext1('<') ? int(kTkShl) : '<';
      case '>': advance(); return checkNext1('=') ? int(kTkGe) : checkNext1('>') ? int(kTkShr) : '>';
      case '/': advance(); return checkNext1('/') ? int(kTkIDiv) : '/';
      case '~': advance(); return checkNext1('=') ? int(kTkNe) : '~';
      case ':': advance(); return checkNext1(':') ? int(kTkDbColon) : ':';
      case '"': case '\'':
        readString(c, tok);
        result = kTkString;
        break;
      case '.':
        saveAndAdvance();
        if (checkNext1('.')) return checkNext1('.') ? int(kTkDots) : kTkConcat;
        if (!isLuaDigit(peekChar())) return '.';
        result = readNumeral(tok);
        break;
      case -1:
        return kTkEos;
      default:
        if (isLuaDigit(c)) {
          result = readNumeral(tok);
        } else if (isLuaAlpha(c)) {
          result = readName(tok);
        } else {
          advance();
          return c;
        }
        break;
    }
    tok.raw = buffer_;
    return result;
  }
}

}  // namespace weft::frontend
