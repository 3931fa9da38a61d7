local a, b = ...
local r
r = a + b; r = a - b; r = a * b; r = a / b; r = a % b; r = a ^ b; r = a // b
r = a & b; r = a | b; r = a ~ b; r = a << b; r = a >> b
r = a + 1; r = 1 + a; r = a - 1; r = 1 - a; r = a * 2; r = 2 * a
r = a + 1.5; r = a - 1.5; r = a / 2; r = a % 3; r = a ^ 2; r = a // 4
r = a & 0xff; r = 0xff & a; r = a | 1; r = a ~ 3
r = a << 2; r = 2 << a; r = a >> 3; r = 3 >> a; r = a << -1; r = a >> -1
r = -a; r = ~a; r = #a; r = not a
r = 1 + 2; r = 10 / 2; r = 7 // 2; r = 7 % -3; r = 2 ^ 10; r = 1 / 0; r = 0 / 0
r = -0.0; r = 3 & 5; r = 1 << 63; r = 1 << 64; r = -(-9223372036854775807 - 1)
r = 3.0 & 1; r = 1.5 & 1; r = 5 // 0; r = 5 % 0; r = -2^2; r = 2^-1
r = a + 300; r = a - 300; r = a + 127; r = a - 128; r = a + 128
r = "10" + 1; r = a .. b .. "c" .. 1
r = a * 1e100; r = 100000000000 * a
r = 9223372036854775807 + 1; r = 0x7fffffffffffffff; r = 0xffffffffffffffffff
