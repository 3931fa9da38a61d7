-- Debian's lua-lpeg (lpeg.so, built for lua5.4) loaded by require from the default
-- package.cpath and exercised: patterns, captures, grammars, substitution, errors.
local lpeg, file = require "lpeg"
print(type(lpeg), type(lpeg.match), file, require "lpeg" == lpeg)
local P, R, S, C, Ct, Cs, V = lpeg.P, lpeg.R, lpeg.S, lpeg.C, lpeg.Ct, lpeg.Cs, lpeg.V

local digits = R "09" ^ 1
print(lpeg.match(digits, "2024abc"), lpeg.match(digits, "abc"))
local number = C(P "-" ^ -1 * digits * (P "." * digits) ^ -1) / tonumber
local space = S " \t\n" ^ 0
local list = Ct(space * number * (space * P "," * space * number) ^ 0 * space * -1)
local t = lpeg.match(list, " 1, -2.5 ,30 ")
print(#t, t[1], t[2], t[3], math.type(t[1]), math.type(t[2]))
print(lpeg.match(list, "1,,2"))

-- Balanced parentheses and arithmetic with a grammar.
local arith = P {
  "Exp",
  Exp = Ct(V "Term" * (C(S "+-") * V "Term") ^ 0),
  Term = Ct(V "Factor" * (C(S "*/") * V "Factor") ^ 0),
  Factor = space * (number + P "(" * V "Exp" * P ")") * space,
}
local function eval(x)
  if type(x) == "number" then return x end
  local acc = eval(x[1])
  for i = 2, #x, 2 do
    local op, y = x[i], eval(x[i + 1])
    if op == "+" then acc = acc + y elseif op == "-" then acc = acc - y
    elseif op == "*" then acc = acc * y else acc = acc / y end
  end
  return acc
end
print(eval(lpeg.match(arith, "2 * (3 + 4) - 10 / 4")))

-- Substitution and searching anywhere.
local vowel = Cs((S "aeiou" / string.upper + 1) ^ 0)
print(lpeg.match(vowel, "pattern matching with lpeg"))
local function anywhere(p) return P { lpeg.Cp() * p * lpeg.Cp() + 1 * V(1) } end
print(lpeg.match(anywhere "match", "pattern matching"))
local words = Ct((C(R("az", "AZ") ^ 1) + 1) ^ 0)
print(table.concat(lpeg.match(words, "one, two; three!"), "|"))

-- Errors raised from inside the C module.
print(pcall(lpeg.match, {}, "x"))
print(pcall(lpeg.P, {}))
print(lpeg.type(P "a"), lpeg.type(1), tostring(P "a"):match("^lpeg%-pattern") ~= nil)
