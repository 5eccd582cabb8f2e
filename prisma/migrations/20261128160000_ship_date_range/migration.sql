-- A ship date from year 1 to 9999 (UTC), as placeOrder accepts (src/domain/validation.ts). Year 0,
-- which RFC 3339 allows, is 1 BC here, and a time before year 1 or after 9999 is stored but read back
-- by Prisma as an invalid date: such an order answered INTERNAL through one path and its date through
-- another. The constraint keeps other writers (a script, psql) from storing one.
--
-- NOT VALID: rows already stored are not checked, so that a database holding such an order still
-- migrates. It holds for every row written from now on; such rows can be found with
--   SELECT id, ship_date FROM orders
--    WHERE ship_date < '0001-01-01 00:00:00+00' OR ship_date > '9999-12-31 23:59:59.999+00';
-- and, once they are corrected, `ALTER TABLE orders VALIDATE CONSTRAINT orders_ship_date_in_range`.
ALTER TABLE "orders" ADD CONSTRAINT "orders_ship_date_in_range"
  CHECK ("ship_date" BETWEEN '0001-01-01 00:00:00+00' AND '9999-12-31 23:59:59.999+00') NOT VALID;
